//! Plane geometry of silhouettes in normalised image coordinates: the target region
//! (even–odd interior of closed polygons), the garment's projected triangles, nearest
//! points and rasterisation for the intersection over union.
use crate::Vec2;

/// Samples per side of the image grid on which [`super::SilhouetteTerm::iou`] is measured:
/// 512 (pixel centres at `−1 + (k + ½) · 2/512`).
pub const IOU_RESOLUTION: usize = 512;

/// One closed polygon: its corners in order (the last joins the first).
pub type Outline = Vec<Vec2>;

/// A target region: the even–odd interior of its outlines (a hole is an outline inside
/// another).
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    outlines: Vec<Outline>,
}

/// Pixel centres of an `n` × `n` grid over [−1, 1]², row by row from y = −1.
fn pixel_centre(n: usize, k: usize) -> f64 {
    -1.0 + (k as f64 + 0.5) * 2.0 / n as f64
}

/// The closest point to `p` on segment `a b` and its parameter `t ∈ [0, 1]`.
fn nearest_on_segment(p: &Vec2, a: &Vec2, b: &Vec2) -> (Vec2, f64) {
    let ab = b - a;
    let len2 = ab.norm_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(&ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t, t)
}

impl Region {
    /// The region of `outlines` (each with at least 3 corners, checked by the reader).
    pub fn new(outlines: Vec<Outline>) -> Self {
        Region { outlines }
    }

    /// The outlines.
    pub fn outlines(&self) -> &[Outline] {
        &self.outlines
    }

    fn edges(&self) -> impl Iterator<Item = (&Vec2, &Vec2)> {
        self.outlines
            .iter()
            .flat_map(|o| o.iter().zip(o.iter().cycle().skip(1)))
    }

    /// Whether `p` lies inside (even–odd rule: a ray from `p` crosses the outlines an odd
    /// number of times).
    pub fn contains(&self, p: &Vec2) -> bool {
        let mut inside = false;
        for (a, b) in self.edges() {
            if (a.y > p.y) != (b.y > p.y) {
                let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
                if p.x < x {
                    inside = !inside;
                }
            }
        }
        inside
    }

    /// The point of the outlines nearest to `p`.
    pub fn nearest_boundary_point(&self, p: &Vec2) -> Vec2 {
        let mut best = (f64::INFINITY, *p);
        for (a, b) in self.edges() {
            let (c, _) = nearest_on_segment(p, a, b);
            let d = (c - p).norm_squared();
            if d < best.0 {
                best = (d, c);
            }
        }
        best.1
    }

    /// Points along the outlines, about `count` in all at equal spacing, every corner
    /// among them.
    pub fn samples(&self, count: usize) -> Vec<Vec2> {
        let perimeter: f64 = self.edges().map(|(a, b)| (b - a).norm()).sum();
        let spacing = perimeter / count.max(1) as f64;
        let mut out = Vec::new();
        for (a, b) in self.edges() {
            let len = (b - a).norm();
            let pieces = if spacing > 0.0 {
                (len / spacing).ceil().max(1.0) as usize
            } else {
                1
            };
            out.extend((0..pieces).map(|k| a + (b - a) * (k as f64 / pieces as f64)));
        }
        out
    }

    /// The region on an `n` × `n` grid over the image, row by row from y = −1 (the even–odd
    /// rule of [`Region::contains`] along each row of pixel centres).
    pub fn raster(&self, n: usize) -> Vec<bool> {
        let mut out = Vec::with_capacity(n * n);
        let mut crossings = Vec::new();
        for r in 0..n {
            let y = pixel_centre(n, r);
            crossings.clear();
            for (a, b) in self.edges() {
                if (a.y > y) != (b.y > y) {
                    crossings.push(a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x));
                }
            }
            crossings.sort_by(f64::total_cmp);
            // Inside when an odd number of crossings lie to the right of the pixel centre.
            let mut left = 0;
            for c in 0..n {
                let x = pixel_centre(n, c);
                while left < crossings.len() && crossings[left] <= x {
                    left += 1;
                }
                out.push((crossings.len() - left) % 2 == 1);
            }
        }
        out
    }

    /// The outlines of a region given on an `n` × `n` grid (`mask`, row by row from
    /// y = −1, as [`Region::raster`] and [`rasterise`](super::rasterise) give): the pixel
    /// edges between inside and outside, joined into closed polygons with straight runs
    /// merged; their even–odd interior is the union of the inside pixels.
    pub fn trace(mask: &[bool], n: usize) -> Region {
        let at = |r: isize, c: isize| {
            r >= 0
                && c >= 0
                && (r as usize) < n
                && (c as usize) < n
                && mask[r as usize * n + c as usize]
        };
        // Directed pixel edges (grid corners (row, column)), inside on the left.
        let mut from: std::collections::HashMap<(usize, usize), Vec<(usize, usize)>> =
            std::collections::HashMap::new();
        let mut edges = 0;
        for r in 0..n {
            for c in 0..n {
                if !mask[r * n + c] {
                    continue;
                }
                let (ri, ci) = (r as isize, c as isize);
                let sides = [
                    (!at(ri - 1, ci), (r, c), (r, c + 1)),
                    (!at(ri, ci + 1), (r, c + 1), (r + 1, c + 1)),
                    (!at(ri + 1, ci), (r + 1, c + 1), (r + 1, c)),
                    (!at(ri, ci - 1), (r + 1, c), (r, c)),
                ];
                for (open, a, b) in sides {
                    if open {
                        from.entry(a).or_default().push(b);
                        edges += 1;
                    }
                }
            }
        }
        let corner = |(r, c): (usize, usize)| {
            let h = 2.0 / n as f64;
            Vec2::new(-1.0 + c as f64 * h, -1.0 + r as f64 * h)
        };
        let mut starts: Vec<(usize, usize)> = from.keys().copied().collect();
        starts.sort_unstable();
        let mut outlines = Vec::new();
        let mut used = 0;
        for start in starts {
            while let Some(first) = from.get_mut(&start).and_then(Vec::pop) {
                let mut path = vec![start];
                let mut at = first;
                used += 1;
                while at != start {
                    path.push(at);
                    match from.get_mut(&at).and_then(Vec::pop) {
                        Some(next) => at = next,
                        None => break,
                    }
                    used += 1;
                }
                // Keep the corners where the direction turns.
                let m = path.len();
                let turns: Vec<Vec2> = (0..m)
                    .filter(|&k| {
                        let (p, q, r) = (path[(k + m - 1) % m], path[k], path[(k + 1) % m]);
                        let d1 = (q.0 as isize - p.0 as isize, q.1 as isize - p.1 as isize);
                        let d2 = (r.0 as isize - q.0 as isize, r.1 as isize - q.1 as isize);
                        d1 != d2
                    })
                    .map(|k| corner(path[k]))
                    .collect();
                if turns.len() >= 3 {
                    outlines.push(turns);
                }
            }
        }
        debug_assert_eq!(used, edges);
        Region::new(outlines)
    }
}

/// The nearest point of the garment's image to a point outside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    /// The point (on a projected triangle edge).
    pub point: Vec2,
    /// The particles at the ends of that edge.
    pub ends: [usize; 2],
    /// `point = (1 − t) q[ends[0]] + t q[ends[1]]`.
    pub t: f64,
}

/// A garment's triangles as the camera sees them (those with every corner in front).
pub struct Projected<'a> {
    q: &'a [Option<Vec2>],
    /// Corner indices, corners and bounding box (min, max) of each visible triangle.
    triangles: Vec<([usize; 3], [Vec2; 3], Vec2, Vec2)>,
}

impl<'a> Projected<'a> {
    /// The triangles of `triangles` whose corners `q` all shows.
    pub fn new(q: &'a [Option<Vec2>], triangles: &[[usize; 3]]) -> Self {
        let triangles = (triangles.iter())
            .filter_map(|t| {
                let c = [q[t[0]]?, q[t[1]]?, q[t[2]]?];
                let lo = c[0].inf(&c[1]).inf(&c[2]);
                let hi = c[0].sup(&c[1]).sup(&c[2]);
                Some((*t, c, lo, hi))
            })
            .collect();
        Projected { q, triangles }
    }

    /// Whether a triangle covers `p` (its edges included).
    pub fn covers(&self, p: &Vec2) -> bool {
        (self.triangles.iter())
            .filter(|(_, _, lo, hi)| p.x >= lo.x && p.y >= lo.y && p.x <= hi.x && p.y <= hi.y)
            .any(|(_, c, _, _)| in_triangle(p, c))
    }

    /// The point of the triangles' edges nearest to `p`, `None` without triangles.
    pub fn nearest(&self, p: &Vec2) -> Option<Nearest> {
        let mut best: Option<(f64, Nearest)> = None;
        for (t, c, lo, hi) in &self.triangles {
            let gap = (lo - p).sup(&(p - hi)).sup(&Vec2::zeros()).norm_squared();
            if best.is_some_and(|(d, _)| gap >= d) {
                continue;
            }
            for k in 0..3 {
                let (a, b) = (k, (k + 1) % 3);
                let (point, s) = nearest_on_segment(p, &c[a], &c[b]);
                let d = (point - p).norm_squared();
                if best.is_none_or(|(bd, _)| d < bd) {
                    let ends = [t[a], t[b]];
                    best = Some((d, Nearest { point, ends, t: s }));
                }
            }
        }
        debug_assert!(best.is_none_or(|(_, n)| self.q[n.ends[0]].is_some()));
        best.map(|(_, n)| n)
    }

    /// The triangles on an `n` × `n` grid over the image, row by row from y = −1.
    pub fn raster(&self, n: usize) -> Vec<bool> {
        let mut out = vec![false; n * n];
        let cell = |v: f64| ((v + 1.0) * 0.5 * n as f64 - 0.5).clamp(0.0, n as f64 - 1.0);
        for (_, c, lo, hi) in &self.triangles {
            if hi.x < -1.0 || hi.y < -1.0 || lo.x > 1.0 || lo.y > 1.0 {
                continue;
            }
            let (c0, c1) = (cell(lo.x).floor() as usize, cell(hi.x).ceil() as usize);
            let (r0, r1) = (cell(lo.y).floor() as usize, cell(hi.y).ceil() as usize);
            for r in r0..=r1 {
                for k in c0..=c1 {
                    let p = Vec2::new(pixel_centre(n, k), pixel_centre(n, r));
                    if in_triangle(&p, c) {
                        out[r * n + k] = true;
                    }
                }
            }
        }
        out
    }
}

/// Whether `p` lies in the triangle `c` (either winding, edges included; a triangle of
/// zero area covers nothing).
fn in_triangle(p: &Vec2, c: &[Vec2; 3]) -> bool {
    let cross = |a: &Vec2, b: &Vec2| (b - a).perp(&(p - a));
    let area = (c[1] - c[0]).perp(&(c[2] - c[0]));
    if area == 0.0 {
        return false;
    }
    let s = area.signum();
    (0..3).all(|k| s * cross(&c[k], &c[(k + 1) % 3]) >= 0.0)
}
