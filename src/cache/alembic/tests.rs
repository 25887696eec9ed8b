//! The writer read back by a minimal Ogawa/Alembic reader written here from the format
//! description (the module docs of `ogawa` and `schema`), independent of the writer's
//! code: it follows references from the root, decodes property headers bit by bit and
//! checks every sample's key.
use super::ogawa::{murmur3_x64_128, DATA_BIT};
use super::*;
use crate::cache::Reopen;
use crate::fixtures::{sheet, SheetSpec};

/// What the reader finds in a drape archive.
#[derive(Debug)]
pub(crate) struct Read {
    /// Object paths (`/Xform/Shape`).
    pub paths: Vec<String>,
    /// `.geom` property name → (info word, sample count, time sampling index).
    pub headers: Vec<(String, u32, u32, u32)>,
    /// `P` of every sample.
    pub points: Vec<Vec<[f32; 3]>>,
    /// `.velocities` of every sample.
    pub velocities: Vec<Vec<[f32; 3]>>,
    /// `.selfBnds` of every sample.
    pub bounds: Vec<[f64; 6]>,
    /// `.faceCounts`, `.faceIndices`.
    pub topology: (Vec<i32>, Vec<i32>),
    /// UV of every corner (`uv/.vals` through `uv/.indices`).
    pub uvs: Vec<[f32; 2]>,
    /// Time samplings: (max samples, time per sample, start).
    pub samplings: Vec<(u32, f64, f64)>,
    /// Archive metadata.
    pub metadata: String,
}

struct File(Vec<u8>);

impl File {
    fn u64(&self, at: u64) -> u64 {
        let at = at as usize;
        u64::from_le_bytes(self.0[at..at + 8].try_into().unwrap())
    }
    fn group(&self, r: u64) -> Vec<u64> {
        assert_eq!(r & DATA_BIT, 0, "a group, not a data");
        if r == 0 {
            return Vec::new();
        }
        (0..self.u64(r)).map(|i| self.u64(r + 8 + 8 * i)).collect()
    }
    fn data(&self, r: u64) -> &[u8] {
        assert_ne!(r & DATA_BIT, 0, "a data, not a group");
        let at = r & !DATA_BIT;
        if at == 0 {
            return &[];
        }
        let n = self.u64(at) as usize;
        &self.0[at as usize + 8..at as usize + 8 + n]
    }
    /// A sample's values after checking its key.
    fn sample(&self, r: u64) -> &[u8] {
        let d = self.data(r);
        assert_eq!(d[..16], murmur3_x64_128(&d[16..]), "sample key");
        &d[16..]
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Property headers: (name, info, samples, time sampling); metadata by index only.
fn property_headers(b: &[u8]) -> Vec<(String, u32, u32, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let info = u32_at(b, at);
        at += 4;
        let width = [1, 2, 4][((info >> 2) & 3) as usize];
        let int = |at: &mut usize| {
            let mut v = [0u8; 4];
            v[..width].copy_from_slice(&b[*at..*at + width]);
            *at += width;
            u32::from_le_bytes(v)
        };
        let (mut samples, mut ts) = (0, 0);
        if info & 3 != 0 {
            samples = int(&mut at);
            if info & 0x200 != 0 {
                int(&mut at);
                int(&mut at);
            }
            if info & 0x100 != 0 {
                ts = int(&mut at);
            }
        }
        let n = int(&mut at) as usize;
        let name = String::from_utf8(b[at..at + n].to_vec()).unwrap();
        at += n;
        assert_ne!(info >> 20 & 0xff, 255, "metadata is indexed");
        out.push((name, info, samples, ts));
    }
    out
}

fn f32s<const N: usize>(b: &[u8]) -> Vec<[f32; N]> {
    b.chunks_exact(4 * N)
        .map(|c| {
            std::array::from_fn(|i| f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}

/// Reads a drape archive: the Xform's PolyMesh and everything above.
pub(crate) fn read(path: &Path) -> Read {
    let f = File(std::fs::read(path).unwrap());
    assert_eq!(&f.0[..5], b"Ogawa");
    assert_eq!(f.0[5], 0xff, "frozen");
    assert_eq!(&f.0[6..8], &[0, 1]);
    let root = f.group(f.u64(8));
    assert_eq!(root.len(), 6);
    assert_eq!(f.data(root[0]), 0i32.to_le_bytes());
    assert!(u32_at(f.data(root[1]), 0) >= 9999);
    let metadata = String::from_utf8(f.data(root[3]).to_vec()).unwrap();
    let ts = f.data(root[4]);
    let mut samplings = Vec::new();
    let mut at = 0;
    while at < ts.len() {
        let max = u32_at(ts, at);
        let per = f64::from_le_bytes(ts[at + 4..at + 12].try_into().unwrap());
        assert_eq!(u32_at(ts, at + 12), 1, "uniform: one time per cycle");
        let start = f64::from_le_bytes(ts[at + 16..at + 24].try_into().unwrap());
        samplings.push((max, per, start));
        at += 24;
    }
    let names = |headers: &[u8]| {
        let b = &headers[..headers.len() - 32];
        let n = u32_at(b, 0) as usize;
        assert_eq!(n + 5, b.len(), "one child, indexed metadata");
        String::from_utf8(b[4..4 + n].to_vec()).unwrap()
    };
    let top = f.group(root[2]);
    assert_eq!(top.len(), 3);
    let xform_name = names(f.data(top[2]));
    let xform = f.group(top[1]);
    let shape_name = names(f.data(xform[2]));
    let shape = f.group(xform[1]);
    assert_eq!(f.data(shape[1]).len(), 32, "no children: digests only");
    let props = f.group(shape[0]);
    assert_eq!(property_headers(f.data(props[1]))[0].0, ".geom");
    let geom = f.group(props[0]);
    let headers = property_headers(f.data(*geom.last().unwrap()));
    let find = |name: &str| {
        let i = headers.iter().position(|h| h.0 == name).unwrap();
        // A constant property stores its first sample only.
        let (info, n) = (headers[i].1, headers[i].2);
        (
            f.group(geom[i]),
            if info & 0x800 != 0 { n.min(1) } else { n },
        )
    };
    let array = |name: &str| -> Vec<&[u8]> {
        let (g, n) = find(name);
        (0..n as usize).map(|k| f.sample(g[2 * k])).collect()
    };
    let (fi, fc) = (array(".faceIndices"), array(".faceCounts"));
    let ints = |b: &[u8]| {
        b.chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (g, n) = find(".selfBnds");
    let bounds = (0..n as usize)
        .map(|k| {
            let b = f.sample(g[k]);
            std::array::from_fn(|i| f64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
        })
        .collect();
    let uvs = match headers.iter().position(|h| h.0 == "uv") {
        Some(i) => {
            let uv = f.group(geom[i]);
            let vals = f32s::<2>(f.sample(f.group(uv[0])[0]));
            let idx: Vec<i32> = ints(f.sample(f.group(uv[1])[0]));
            idx.iter().map(|&i| vals[i as usize]).collect()
        }
        None => Vec::new(),
    };
    Read {
        paths: vec![format!("/{xform_name}/{shape_name}")],
        points: array("P").into_iter().map(f32s::<3>).collect(),
        velocities: array(".velocities").into_iter().map(f32s::<3>).collect(),
        bounds,
        topology: (
            fc.first().map(|b| ints(b)).unwrap_or_default(),
            fi.first().map(|b| ints(b)).unwrap_or_default(),
        ),
        uvs,
        samplings,
        metadata,
        headers,
    }
}

fn garment() -> crate::scene::Garment {
    sheet(&SheetSpec {
        n: 3,
        ..SheetSpec::default()
    })
}

fn frame(points: usize, k: usize) -> Vec<Vec3> {
    (0..points)
        .map(|p| Vec3::new(p as f64 * 0.5, -(k as f64) * 0.25 + 1.0, 1.0 / 3.0))
        .collect()
}

#[test]
fn every_frame_reads_back_exactly_with_velocities_bounds_and_time_sampling() {
    let g = garment();
    let n = g.output_points.len();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("Sheet.abc");
    let meta = CacheMeta::for_garment(&g, 5, 3, 24.0, UpAxis::Y);
    let mut w: Box<dyn CacheWriter> = Box::new(AlembicWriter::create(&out, &meta).unwrap());
    let empty = read(w.partial_path());
    assert!(
        empty.points.is_empty(),
        "a valid archive of no frames first"
    );
    for k in 0..3 {
        w.write_frame(&frame(n, k)).unwrap();
        let r = read(w.partial_path());
        assert_eq!(r.points.len(), k + 1);
        let want: Vec<[f32; 3]> = frame(n, k).iter().map(to_f32).collect();
        assert_eq!(r.points[k], want);
        let v = if k == 0 { 0.0 } else { -0.25 * 24.0 };
        assert!(
            r.velocities[k].iter().all(|q| *q == [0.0, v, 0.0]),
            "{:?}",
            r.velocities[k]
        );
        let top = (n - 1) as f64 * 0.5;
        let y = 1.0 - 0.25 * k as f64;
        let third = f64::from(1.0f32 / 3.0);
        assert_eq!(r.bounds[k], [0.0, y, third, top, y, third]);
        assert_eq!(
            r.samplings,
            [(1, 1.0, 0.0), (k as u32 + 1, 1.0 / 24.0, 5.0 / 24.0)]
        );
    }
    w.finish().unwrap();
    let r = read(&out);
    assert_eq!(r.paths, ["/Sheet/SheetShape"]);
    assert!(
        r.metadata.contains("_ai_Application=drape "),
        "{}",
        r.metadata
    );
    assert!(r.metadata.contains("_ai_DateWritten=unrecorded"));
    // Every property has a sample per frame; P is stored per frame, topology once.
    for (name, info, samples, ts) in &r.headers {
        if name != "uv" {
            assert_eq!((*samples, *ts), (3, 1), "{name}");
            let constant = info & 0x800 != 0;
            assert_eq!(constant, name.starts_with(".face"), "{name}");
        }
    }
}

#[test]
fn topology_is_reversed_per_polygon_with_its_uvs_and_z_up_is_turned_y_up() {
    let g = garment();
    let faces = crate::cache::output_faces(&g).into_owned();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.abc");
    let meta = CacheMeta::for_garment(&g, 1, 1, 30.0, UpAxis::Z);
    let mut w = AlembicWriter::create(&out, &meta).unwrap();
    let p = frame(g.output_points.len(), 1);
    w.write_frame(&p).unwrap();
    Box::new(w).finish().unwrap();
    let r = read(&out);
    let (counts, corners) = r.topology;
    assert_eq!(
        counts,
        faces.counts.iter().map(|&c| c as i32).collect::<Vec<_>>()
    );
    let mut start = 0;
    for &c in &faces.counts {
        let want: Vec<i32> = faces.points[start..start + c]
            .iter()
            .rev()
            .map(|&i| i as i32)
            .collect();
        assert_eq!(corners[start..start + c], want[..]);
        let uv: Vec<[f32; 2]> = faces.uvs[start..start + c]
            .iter()
            .rev()
            .map(|t| [t.x as f32, t.y as f32])
            .collect();
        assert_eq!(r.uvs[start..start + c], uv[..]);
        start += c;
    }
    let q = to_f32(&p[4]);
    assert_eq!(r.points[0][4], [q[0], q[2], -q[1]]);
}

#[test]
fn a_reopened_partial_archive_continues_to_the_bytes_of_one_never_stopped() {
    let g = garment();
    let n = g.output_points.len();
    let dir = tempfile::tempdir().unwrap();
    let meta = CacheMeta::for_garment(&g, 1, 6, 24.0, UpAxis::Z);
    let whole = dir.path().join("whole.abc");
    let mut w: Box<dyn CacheWriter> = Box::new(AlembicWriter::create(&whole, &meta).unwrap());
    for k in 0..6 {
        w.write_frame(&frame(n, k)).unwrap();
    }
    w.finish().unwrap();

    // Interrupted after 4 frames; its checkpoint names 2.
    let out = dir.path().join("cut.abc");
    let mut w: Box<dyn CacheWriter> = Box::new(AlembicWriter::create(&out, &meta).unwrap());
    for k in 0..4 {
        w.write_frame(&frame(n, k)).unwrap();
    }
    let partial = w.partial_path().to_path_buf();
    drop(w);
    let mut w: Box<dyn CacheWriter> = Box::new(AlembicWriter::reopen(&out, &meta, 2).unwrap());
    let r = read(&partial);
    assert_eq!(r.points.len(), 2, "the archive of the checkpoint's frames");
    assert_eq!(
        r.points[1],
        frame(n, 1)
            .iter()
            .map(|p| {
                let [x, y, z] = to_f32(p);
                [x, z, -y]
            })
            .collect::<Vec<_>>()
    );
    for k in 2..6 {
        w.write_frame(&frame(n, k)).unwrap();
    }
    w.finish().unwrap();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&whole).unwrap());

    // A partial archive of fewer frames, or of another cache, is not continued.
    let mut w: Box<dyn CacheWriter> = Box::new(AlembicWriter::create(&out, &meta).unwrap());
    w.write_frame(&frame(n, 0)).unwrap();
    drop(w);
    let e = AlembicWriter::reopen(&out, &meta, 2).unwrap_err();
    assert!(
        e.to_string()
            .contains("fewer than the checkpoint's 2 frames"),
        "{e}"
    );
    let other = CacheMeta::for_garment(&g, 1, 6, 30.0, UpAxis::Z);
    let e = AlembicWriter::reopen(&out, &other, 1).unwrap_err();
    assert!(
        e.to_string().contains("is not the .abc cache of this bake"),
        "{e}"
    );
    let w: Box<dyn CacheWriter> = Box::new(AlembicWriter::reopen(&out, &meta, 1).unwrap());
    assert_eq!(read(w.partial_path()).points.len(), 1);
}
