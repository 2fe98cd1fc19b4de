//! Certificates made with `openssl`, the way users make them (scripts/lib.sh too): a self-signed
//! one carries basicConstraints CA:TRUE, which webpki refuses as a server's certificate unless
//! tsumo trusts it as given, and which rcgen's certificates (the nginx fixture's) do not carry.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("run openssl (the tests need it installed)");
    assert!(
        out.status.success(),
        "openssl {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn files(dir: &Path, stem: &str) -> CertFiles {
    CertFiles {
        cert: dir.join(format!("{stem}.pem")),
        key: dir.join(format!("{stem}.key")),
    }
}

/// `openssl req -x509 -newkey rsa:2048 -nodes -subj /CN={cn} [-addext subjectAltName={san}]`.
pub fn self_signed(dir: &Path, stem: &str, cn: &str, san: Option<&str>) -> CertFiles {
    let f = files(dir, stem);
    let subject = format!("/CN={cn}");
    let mut args = vec![
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", &subject,
    ];
    let ext;
    if let Some(san) = san {
        ext = format!("subjectAltName={san}");
        args.extend(["-addext", &ext]);
    }
    let (cert, key) = (f.cert.to_string_lossy(), f.key.to_string_lossy());
    args.extend(["-keyout", &key, "-out", &cert]);
    openssl(&args);
    f
}

/// A certificate for `cn` and `san` (none: only the CN), signed by `ca` (itself made with
/// [`self_signed`]).
pub fn signed_by(ca: &CertFiles, dir: &Path, stem: &str, cn: &str, san: Option<&str>) -> CertFiles {
    let f = files(dir, stem);
    let csr = dir.join(format!("{stem}.csr"));
    let ext = dir.join(format!("{stem}.ext"));
    let extensions = match san {
        Some(san) => format!("subjectAltName={san}\n"),
        None => "basicConstraints=CA:FALSE\n".to_string(),
    };
    std::fs::write(&ext, extensions).expect("write extension file");
    let subject = format!("/CN={cn}");
    let (cert, key, csr, ext) = (
        f.cert.to_string_lossy(),
        f.key.to_string_lossy(),
        csr.to_string_lossy(),
        ext.to_string_lossy(),
    );
    openssl(&[
        "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", &subject, "-keyout", &key, "-out",
        &csr,
    ]);
    let (ca_cert, ca_key) = (ca.cert.to_string_lossy(), ca.key.to_string_lossy());
    openssl(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca_cert,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        &ext,
        "-out",
        &cert,
    ]);
    f
}
