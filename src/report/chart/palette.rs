//! The series' colours: twenty that a reader tells apart (Tableau 10, then ten more of other
//! hues and darknesses), so twenty runs compared never share one; past twenty, hues spaced
//! evenly by the count, in two darknesses, still one colour each.

use plotters::style::RGBColor;

/// Tableau 10 first (the colours of a chart of few lines), then ten others.
pub(super) const COLOURS: [RGBColor; 20] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x00, 0x00, 0x75),
    RGBColor(0x80, 0x00, 0x00),
    RGBColor(0x00, 0x64, 0x00),
    RGBColor(0xf0, 0x32, 0xe6),
    RGBColor(0x46, 0x99, 0x90),
    RGBColor(0x4b, 0x00, 0x82),
    RGBColor(0xfa, 0x80, 0x72),
    RGBColor(0x2f, 0x4f, 0x4f),
    RGBColor(0x99, 0x00, 0x4c),
    RGBColor(0x00, 0x80, 0xff),
];

/// Colour `index` of a chart that uses `count` colours.
pub(super) fn colour(index: usize, count: usize) -> RGBColor {
    if count <= COLOURS.len() {
        return COLOURS[index % COLOURS.len()];
    }
    let hue = (index % count) as f64 / count as f64 * 360.0;
    let value = if index.is_multiple_of(2) { 0.85 } else { 0.55 };
    hsv(hue, 0.8, value)
}

/// A colour `shade` steps towards white (a label's later rounds), never white itself.
pub(super) fn shaded(RGBColor(r, g, b): RGBColor, shade: usize) -> RGBColor {
    let towards_white = (shade as f64 * 0.4).min(0.8);
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * towards_white).round() as u8;
    RGBColor(mix(r), mix(g), mix(b))
}

fn hsv(hue: f64, saturation: f64, value: f64) -> RGBColor {
    let chroma = value * saturation;
    let h = hue / 60.0;
    let x = chroma * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (chroma, x, 0.0),
        1 => (x, chroma, 0.0),
        2 => (0.0, chroma, x),
        3 => (0.0, x, chroma),
        4 => (x, 0.0, chroma),
        _ => (chroma, 0.0, x),
    };
    let m = value - chroma;
    let byte = |c: f64| ((c + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}
