//! A cluster of generator "nodes" on this machine: N network namespaces, each with one veth
//! pair onto a bridge in the root namespace and one address of a /24 that the bridge holds too,
//! so a process in a namespace reaches a server in the root namespace listening on the bridge's
//! address — over a network path of its own, from an address of its own, as a pod on another
//! node would. Everything is removed on drop, also when the test fails.
//!
//! Names are unique per cluster (process id and a counter): parallel tests and runs do not
//! collide. scripts/lib.sh (`cluster_up`, `cluster_down`) builds the same for scripts/demo-cluster.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Clusters of this process so far (part of the names).
static COUNT: AtomicU32 = AtomicU32::new(0);
/// Creation picks a free /24 by looking at the addresses in use: one at a time.
static CREATING: Mutex<()> = Mutex::new(());

/// The namespaces, the bridge and their addresses; torn down on drop.
#[derive(Debug)]
pub struct Cluster {
    /// `tsumo-<id>-<i>`.
    pub namespaces: Vec<String>,
    /// The root namespace's bridge.
    bridge: String,
    /// The bridge's address: where servers in the root namespace listen for the nodes.
    pub server: Ipv4Addr,
    /// Each namespace's address, in order.
    pub nodes: Vec<Ipv4Addr>,
    /// The bridge's ends of the veth pairs (gone with their namespace; deleted on drop in case
    /// the move into it failed).
    veths: Vec<String>,
}

/// Runs `ip ARGS`; the error holds the command and its stderr.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A third octet `x` such that no address of 10.77.x.0/24 is in use on this host.
fn free_subnet(seed: u32) -> Result<u8, String> {
    let out = Command::new("ip")
        .args(["-4", "-o", "address", "show"])
        .output()
        .map_err(|e| format!("ip -4 -o address show: {e}"))?;
    let used = String::from_utf8_lossy(&out.stdout).into_owned();
    (0..250u32)
        .map(|i| ((seed + i) % 250 + 1) as u8)
        .find(|x| !used.contains(&format!(" 10.77.{x}.")))
        .ok_or_else(|| "no free 10.77.x.0/24 on this host".to_string())
}

impl Cluster {
    /// Creates `n` namespaces on one bridge, or says why it cannot (not root, no `ip`, no
    /// netns support); whatever was made before the failure is removed.
    pub fn create(n: usize) -> Result<Cluster, String> {
        let _one_at_a_time = CREATING.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        let serial = COUNT.fetch_add(1, Ordering::Relaxed);
        // Interface names have at most 15 bytes: `tsb` + 5 digits + `v` + 2 digits.
        let id = format!("{:05}", (pid * 7 + serial * 13) % 100_000);
        let x = free_subnet(pid + serial)?;
        let mut cluster = Cluster {
            namespaces: Vec::new(),
            bridge: format!("tsb{id}"),
            server: Ipv4Addr::new(10, 77, x, 1),
            nodes: Vec::new(),
            veths: Vec::new(),
        };
        // On an early return, drop removes what exists so far.
        ip(&["link", "add", &cluster.bridge, "type", "bridge"])?;
        ip(&[
            "address",
            "add",
            &format!("{}/24", cluster.server),
            "dev",
            &cluster.bridge,
        ])?;
        ip(&["link", "set", &cluster.bridge, "up"])?;
        for i in 0..n {
            let ns = format!("tsumo-{id}-{i}");
            ip(&["netns", "add", &ns])?;
            cluster.namespaces.push(ns.clone());
            let host_end = format!("tsb{id}v{i}");
            let node_end = format!("tsn{id}v{i}");
            let addr = Ipv4Addr::new(10, 77, x, 10 + i as u8);
            ip(&[
                "link", "add", &host_end, "type", "veth", "peer", "name", &node_end,
            ])?;
            cluster.veths.push(host_end.clone());
            ip(&["link", "set", &host_end, "master", &cluster.bridge])?;
            ip(&["link", "set", &host_end, "up"])?;
            ip(&["link", "set", &node_end, "netns", &ns])?;
            let inside = |args: &[&str]| {
                let mut all = vec!["netns", "exec", &ns, "ip"];
                all.extend_from_slice(args);
                ip(&all)
            };
            inside(&["link", "set", "lo", "up"])?;
            inside(&["link", "set", &node_end, "name", "eth0"])?;
            inside(&["address", "add", &format!("{addr}/24"), "dev", "eth0"])?;
            inside(&["link", "set", "eth0", "up"])?;
            cluster.nodes.push(addr);
        }
        Ok(cluster)
    }

    /// `ip netns exec NS PROGRAM` for node `i`: the program runs in that namespace (the
    /// environment is passed through).
    pub fn command(&self, i: usize, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.namespaces[i], program]);
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Deleting a namespace destroys its veth end, and with it the bridge's end.
        for ns in &self.namespaces {
            if let Err(e) = ip(&["netns", "delete", ns]) {
                eprintln!("cluster teardown: {e}");
            }
        }
        for veth in &self.veths {
            // Normally already gone with its namespace.
            let _ = ip(&["link", "delete", veth]);
        }
        if let Err(e) = ip(&["link", "delete", &self.bridge]) {
            eprintln!("cluster teardown: {e}");
        }
    }
}
