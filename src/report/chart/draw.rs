//! Every chart's drawing on plotters' SVG backend: titles, frame, gridlines, the series with
//! their markers, the capacity marks, and the legend: in the frame's top left while it is a
//! few lines, else in columns under the chart, the document grown to hold it (twenty runs
//! compared never spill a legend out of the frame).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Axis, Ticked};
use super::palette::{colour, shaded};
use super::*;

/// Legends of up to this many lines sit in the frame; longer ones go under the chart.
const LEGEND_IN_FRAME: usize = 8;
/// A legend under the chart: its columns, a line's height, and the longest name shown.
const LEGEND_COLUMNS: usize = 3;
const LEGEND_LINE: u32 = 18;
const LEGEND_NAME: usize = 40;

/// A legend line's swatch: a bar as thick as the line, or the series' marker.
#[derive(Debug, Clone, Copy)]
enum Swatch {
    Bar(u32),
    Marker(Shape),
}

/// One line of the legend.
struct Entry {
    name: String,
    colour: RGBColor,
    swatch: Swatch,
}

/// Every chart: titles, frame, gridlines with labels, axis names, one polyline per joined
/// series (each marker a `<circle>` or `<line>`s, never a polyline), the capacity marks, and
/// the legend.
pub(super) fn draw(
    titles: &Titles,
    (x, x_label): (&Axis, &str),
    (y, y_label): (&Axis, &str),
    series: &[Series],
    marks: &Marks,
) -> Result<String, ChartError> {
    let entries = legend_entries(series, marks);
    let below = entries.len() > LEGEND_IN_FRAME;
    let legend_height = match below {
        true => entries.len().div_ceil(LEGEND_COLUMNS) as u32 * LEGEND_LINE + 16,
        false => 0,
    };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT + legend_height)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let (area, legend_area) = root.split_vertically(HEIGHT);
        let area = titled(area, titles)?;
        let mut chart = frame(&area, (x, x_label), (y, y_label))?;
        let mut colours = entries.iter().map(|e| e.colour);
        for s in series {
            let colour = colours.next().ok_or_else(|| failed("no colour"))?;
            draw_series(&mut chart, (x, y), s, colour)?;
        }
        draw_marks(&mut chart, (x, y), marks, colours)?;
        if below {
            legend(&legend_area, &entries, (20, 8), LEGEND_COLUMNS)?;
        } else if !entries.is_empty() {
            // In the frame's top left, on a white box (curves rise to the right).
            let (px, py) = chart.plotting_area().get_base_pixel();
            legend(&root, &entries, (px + 12, py + 12), 1)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// A chart's plotting context on the SVG backend.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// The legend's lines: the series', then the objectives', then the answer's; each in the colour
/// it is drawn in.
fn legend_entries(series: &[Series], marks: &Marks) -> Vec<Entry> {
    // One colour per index a chart uses: its series', then its objectives'.
    let count = series
        .iter()
        .enumerate()
        .map(|(i, s)| s.colour.unwrap_or(i) + 1)
        .chain([series.len() + marks.objectives.len()])
        .max()
        .unwrap_or(0);
    let mut entries: Vec<Entry> = Vec::new();
    for (position, s) in series.iter().enumerate() {
        let swatch = match (s.joined, s.marker) {
            (false, Some(shape)) => Swatch::Marker(shape),
            _ => Swatch::Bar(s.width.max(2) + 2),
        };
        entries.push(Entry {
            name: s.name.clone(),
            colour: shaded(colour(s.colour.unwrap_or(position), count), s.shade),
            swatch,
        });
    }
    for (i, objective) in marks.objectives.iter().enumerate() {
        entries.push(Entry {
            name: objective.name.clone(),
            colour: colour(series.len() + i, count),
            swatch: Swatch::Bar(2),
        });
    }
    if let Some(answer) = &marks.answer {
        entries.push(Entry {
            name: answer.name.clone(),
            colour: BLACK,
            swatch: Swatch::Bar(4),
        });
    }
    entries
}

/// The area under the chart's title and subtitle (each only when it has text).
fn titled<'b>(
    mut area: DrawingArea<SVGBackend<'b>, Shift>,
    titles: &Titles,
) -> Result<DrawingArea<SVGBackend<'b>, Shift>, ChartError> {
    if !titles.title.is_empty() {
        area = area
            .titled(&titles.title, font(16.0).style(FontStyle::Bold))
            .map_err(failed)?;
    }
    if !titles.subtitle.is_empty() {
        area = area
            .titled(&titles.subtitle, font(11.0).color(&SUBTITLE))
            .map_err(failed)?;
    }
    Ok(area)
}

/// The chart on `area`: its gridlines with their labels, the axes' names, and the frame.
fn frame<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    (x, x_label): (&Axis, &str),
    (y, y_label): (&Axis, &str),
) -> Result<Chart<'a, 'b>, ChartError> {
    let mut chart = ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(25)
        .margin_top(4)
        .margin_bottom(8)
        .x_label_area_size(42)
        .y_label_area_size(62)
        .build_cartesian_2d(x.coord(), y.coord())
        .map_err(failed)?;
    let x_labels = |v: &f64| x.label(*v);
    let y_labels = |v: &f64| y.label(*v);
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .max_light_lines(0)
        // Axes and tick marks would be polylines among the data's (transparent ones are not
        // written): the frame is a rect, and the ticks only push the labels off it.
        .axis_style(TRANSPARENT)
        .set_all_tick_mark_size(4)
        .label_style(font(12.0))
        .axis_desc_style(font(14.0))
        .x_label_formatter(&x_labels)
        .y_label_formatter(&y_labels)
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(failed)?;
    let (x0, x1) = (x.to_plot(x.low), x.to_plot(x.high));
    let (y0, y1) = (y.to_plot(y.low), y.to_plot(y.high));
    chart
        .plotting_area()
        .draw(&Rectangle::new([(x0, y1), (x1, y0)], FRAME))
        .map_err(failed)?;
    Ok(chart)
}

/// One series: its line when joined (thinned to the pixels it covers), then its markers.
fn draw_series(
    chart: &mut Chart<'_, '_>,
    (x, y): (&Axis, &Axis),
    s: &Series,
    colour: RGBColor,
) -> Result<(), ChartError> {
    let points: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (x.to_plot(p.0), y.to_plot(p.1)))
        .collect();
    // More points than pixels across (a long run of short intervals): drawn alike from
    // fewer, so a page's size stops growing with the run.
    let points = if s.joined && s.marker.is_none() && points.len() > WIDTH as usize {
        let pixels: Vec<(i32, i32)> = points.iter().map(|p| chart.backend_coord(p)).collect();
        thinned(&points, &pixels)
    } else {
        points
    };
    let drawn = if s.joined && !points.is_empty() {
        chart.draw_series(LineSeries::new(
            points.clone(),
            colour.stroke_width(s.width),
        ))
    } else {
        // Nothing joined (or nothing at all); still named in the legend.
        chart.draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
    };
    drawn.map_err(failed)?;
    let style = |filled: bool| match filled {
        true => colour.filled(),
        false => colour.stroke_width(2),
    };
    let marked = match s.marker {
        None => Ok(()),
        Some(Shape::Filled) => chart
            .draw_series(points.iter().map(|p| Circle::new(*p, 4, style(true))))
            .map(|_| ()),
        Some(Shape::Hollow) => chart
            .draw_series(points.iter().map(|p| Circle::new(*p, 4, style(false))))
            .map(|_| ()),
        Some(Shape::Cross) => chart
            .draw_series(points.iter().map(|p| Cross::new(*p, 4, style(false))))
            .map(|_| ()),
    };
    marked.map_err(failed)
}

/// The capacity marks: a level line across the frame per objective (in the colours left
/// after the series'), and the answer's upright line.
fn draw_marks(
    chart: &mut Chart<'_, '_>,
    (x, y): (&Axis, &Axis),
    marks: &Marks,
    mut colours: impl Iterator<Item = RGBColor>,
) -> Result<(), ChartError> {
    let (x0, x1) = (x.to_plot(x.low), x.to_plot(x.high));
    let (y0, y1) = (y.to_plot(y.low), y.to_plot(y.high));
    for objective in &marks.objectives {
        let colour = colours.next().ok_or_else(|| failed("no colour"))?;
        let at = y.to_plot(objective.y);
        chart
            .draw_series(LineSeries::new(
                [(x0, at), (x1, at)],
                colour.stroke_width(1),
            ))
            .map_err(failed)?;
    }
    if let Some(answer) = &marks.answer {
        let at = x.to_plot(answer.x);
        chart
            .draw_series(LineSeries::new([(at, y0), (at, y1)], BLACK.stroke_width(2)))
            .map_err(failed)?;
    }
    // A stage's start: a `<rect>` of no width (not a polyline among the data's), its label
    // inside the frame's top.
    for bound in marks
        .bounds
        .iter()
        .filter(|b| b.x >= x.low && b.x <= x.high)
    {
        let at = x.to_plot(bound.x);
        let area = chart.plotting_area();
        area.draw(&Rectangle::new(
            [(at, y1), (at, y0)],
            SUBTITLE.stroke_width(1),
        ))
        .map_err(failed)?;
        let label = EmptyElement::at((at, y1))
            + Text::new(bound.label.clone(), (4, 4), font(11.0).color(&SUBTITLE));
        area.draw(&label).map_err(failed)?;
    }
    Ok(())
}

/// A line's points as it is drawn (`pixels`: where each lands): in each run of points on one
/// pixel column, the lowest and the highest, in their order. At most two points a column,
/// whatever the number of points; every spike stays.
fn thinned(points: &[(f64, f64)], pixels: &[(i32, i32)]) -> Vec<(f64, f64)> {
    let mut kept = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let column = pixels[start].0;
        let end = start + pixels[start..].iter().take_while(|p| p.0 == column).count();
        let run = start..end;
        let low = run.clone().min_by_key(|&k| pixels[k].1).unwrap_or(start);
        let high = run.max_by_key(|&k| pixels[k].1).unwrap_or(start);
        kept.push(points[low.min(high)]);
        if pixels[low].1 != pixels[high].1 {
            kept.push(points[low.max(high)]);
        }
        start = end;
    }
    kept
}

/// The legend, `columns` wide, from `origin` in `area`'s pixels: a line per entry (its swatch,
/// its name cut to fit), on a white box when it is one column in the frame.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    (x, y): (i32, i32),
    columns: usize,
) -> Result<(), ChartError> {
    let rows = entries.len().div_ceil(columns).max(1);
    let line = LEGEND_LINE as i32;
    let name_of = |entry: &Entry| match entry.name.chars().count() > LEGEND_NAME {
        true => {
            let cut: String = entry.name.chars().take(LEGEND_NAME - 1).collect();
            format!("{cut}…")
        }
        false => entry.name.clone(),
    };
    let column_width = (WIDTH as i32 - 2 * x) / columns as i32;
    if columns == 1 {
        // plotters' naive metrics: about 0.6 of the font's size a character.
        let widest = entries.iter().map(|e| name_of(e).chars().count()).max();
        let width = 40 + (widest.unwrap_or(0) as f64 * 7.2) as i32;
        let height = rows as i32 * line + 8;
        area.draw(&Rectangle::new(
            [(x, y), (x + width, y + height)],
            WHITE.mix(0.9).filled(),
        ))
        .map_err(failed)?;
        area.draw(&Rectangle::new(
            [(x, y), (x + width, y + height)],
            RGBColor(0xbb, 0xbb, 0xbb),
        ))
        .map_err(failed)?;
    }
    for (i, entry) in entries.iter().enumerate() {
        let (column, row) = ((i / rows) as i32, (i % rows) as i32);
        let (lx, ly) = (x + 8 + column * column_width, y + 4 + row * line + line / 2);
        match entry.swatch {
            Swatch::Bar(thick) => {
                let half = (thick / 2).max(1) as i32;
                area.draw(&Rectangle::new(
                    [(lx, ly - half), (lx + 22, ly + half)],
                    entry.colour.filled(),
                ))
            }
            Swatch::Marker(Shape::Filled) => {
                area.draw(&Circle::new((lx + 11, ly), 4, entry.colour.filled()))
            }
            Swatch::Marker(Shape::Hollow) => {
                area.draw(&Circle::new((lx + 11, ly), 4, entry.colour.stroke_width(2)))
            }
            Swatch::Marker(Shape::Cross) => {
                area.draw(&Cross::new((lx + 11, ly), 4, entry.colour.stroke_width(2)))
            }
        }
        .map_err(failed)?;
        let style = font(12.0)
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(name_of(entry), (lx + 30, ly), style))
            .map_err(failed)?;
    }
    Ok(())
}
