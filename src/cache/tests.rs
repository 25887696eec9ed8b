//! Behaviour shared by every cache format: the partial file after each frame, the
//! up-front output checks, the topology handed to the writers.
use super::*;
use crate::fixtures::{sheet, SheetSpec};

/// A 3 × 3-particle sheet (9 points, 8 triangles).
fn sheet_garment() -> Garment {
    sheet(&SheetSpec {
        n: 3,
        ..SheetSpec::default()
    })
}

fn frame(points: usize, k: usize) -> Vec<Vec3> {
    (0..points)
        .map(|p| Vec3::new(p as f64 * 0.5, -(k as f64) * 0.25, 1.0 / 3.0))
        .collect()
}

#[test]
fn every_format_keeps_a_valid_partial_file_after_each_frame_and_renames_on_finish() {
    let g = sheet_garment();
    let n = g.output_points.len();
    let dir = tempfile::tempdir().unwrap();
    for name in ["c.pc2", "c.mdd", "c.usda", "c.abc", "c.$F4.geo"] {
        let out = dir.path().join(name);
        let meta = CacheMeta::for_garment(&g, 3, 4, 24.0, UpAxis::Z);
        let mut w = create(&out, &meta).unwrap();
        for k in 0..4 {
            let pts = frame(n, k);
            w.write_frame(&pts).unwrap();
            assert_eq!(w.frames_written(), k + 1);
            let frames = read_partial(&out, w.partial_path(), 3, k + 1);
            assert_eq!(frames.len(), k + 1, "{name} after frame {k}");
            let want: Vec<[f32; 3]> = pts.iter().map(text::to_f32).collect();
            assert_eq!(frames[k], want, "{name}: frame {k} reads back exactly");
        }
        let partial = w.partial_path().to_path_buf();
        let finished = w.finish().unwrap();
        assert_eq!(finished, out);
        match Format::of(&out).unwrap() {
            Format::Geo => {
                let p = FramePattern::parse(&out).unwrap();
                for f in 3..7 {
                    assert!(p.path(f).exists(), "{name}: frame {f}");
                    assert!(!partial_path(&p.path(f)).exists());
                }
            }
            _ => assert!(out.exists() && !partial.exists(), "{name}"),
        }
    }
}

/// Frames of a partial cache, read by format (USD: the points samples of the text,
/// checking the file's closing braces, extents and end time code on the way).
fn read_partial(out: &Path, partial: &Path, start: i32, k: usize) -> Vec<Vec<[f32; 3]>> {
    match Format::of(out).unwrap() {
        Format::Pc2 => pc2::read(partial).unwrap().2,
        Format::Mdd => {
            // Laid out for the whole range (4 frames): the unfinished ones are zeros.
            let (times, mut frames) = mdd::read(partial).unwrap();
            let want: Vec<f32> = (0..4).map(|i| (start + i) as f32 / 24.0).collect();
            assert_eq!(times, want);
            assert!(frames[k..].iter().flatten().all(|p| *p == [0.0; 3]));
            frames.truncate(k);
            frames
        }
        Format::Usda => usda_samples(partial, start, k),
        // Alembic is Y-up: the Z-up points come back turned.
        Format::Abc => alembic::tests::read(partial)
            .points
            .into_iter()
            .map(|f| f.into_iter().map(|[x, y, z]| [x, -z, y]).collect())
            .collect(),
        Format::Geo => {
            let p = FramePattern::parse(out).unwrap();
            (0..k)
                .map(|i| {
                    let path = partial_path(&p.path(start + i as i32));
                    let v: serde_json::Value =
                        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
                    geo_points(&v)
                })
                .collect()
        }
    }
}

fn usda_samples(path: &Path, start: i32, k: usize) -> Vec<Vec<[f32; 3]>> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with("#usda 1.0\n"));
    assert!(
        text.trim_end().ends_with(" };}"),
        "closing braces follow the samples"
    );
    let end = start + k as i32 - 1;
    assert!(text.contains(&format!("    endTimeCode = {end:<11}\n")));
    assert!(text.contains("    upAxis = \"Z\"\n"));
    let extent_lines = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.contains("), ("))
        .filter(|l| l.matches('(').count() == 2)
        .count();
    assert_eq!(extent_lines, k, "one extent sample per finished frame");
    let points = &text[text.find("points.timeSamples = {").unwrap()..];
    points
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("        "))
        .enumerate()
        .map(|(i, l)| {
            // The last live sample ends with the closing braces of the partial layout.
            let l = l.trim().trim_end_matches("};}").trim_end();
            let (f, rest) = l.split_once(": ").unwrap();
            assert_eq!(f.parse::<i32>().unwrap(), start + i as i32);
            rest.trim_start_matches('[')
                .trim_end_matches("],")
                .split("), (")
                .map(|t| {
                    let c: Vec<f32> = t
                        .trim_matches(|c| c == '(' || c == ')')
                        .split(", ")
                        .map(|x| x.parse().unwrap())
                        .collect();
                    [c[0], c[1], c[2]]
                })
                .collect()
        })
        .collect()
}

fn geo_points(v: &serde_json::Value) -> Vec<[f32; 3]> {
    let get = |list: &serde_json::Value, key: &str| {
        let a = list.as_array().unwrap().clone();
        let i = a.iter().position(|x| x == key).unwrap();
        a[i + 1].clone()
    };
    let p = get(&get(v, "attributes"), "pointattributes")[0].clone();
    let tuples = get(&get(&p[1], "values"), "tuples");
    tuples
        .as_array()
        .unwrap()
        .iter()
        .map(|t| [0, 1, 2].map(|i| t[i].as_f64().unwrap() as f32))
        .collect()
}

#[test]
fn output_checks_name_the_path_and_the_fix_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(PathBuf, &str)> = vec![
        (d.join("x.obj"), ".pc2, .mdd, .usda, .abc"),
        (d.join("x.usdc"), ".usda"),
        (d.join("x.bgeo"), "$F4"),
        (d.join("x.geo"), "$F4"),
        (d.join("missing/x.pc2"), "does not exist"),
    ];
    std::fs::write(d.join("file"), b"").unwrap();
    let mut cases = cases;
    cases.push((d.join("file/x.pc2"), "is not a directory"));
    for (out, needle) in cases {
        let e = check_output(&out, true, (1, 3)).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{}", out.display());
        let m = e.to_string();
        assert!(m.contains(needle), "{}: {m}", out.display());
        assert!(m.contains(out.to_str().unwrap()), "names the path: {m}");
    }
    assert!(check_output(&d.join("ok.$F.geo"), false, (1, 3)).is_ok());
    assert!(check_output(&d.join("ok.usd"), false, (1, 3)).is_ok());
    // No probe file is left behind.
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
}

#[test]
fn existing_outputs_and_sequence_frames_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let pc2 = dir.path().join("a.pc2");
    std::fs::write(&pc2, b"old").unwrap();
    assert!(check_output(&pc2, false, (1, 3))
        .unwrap_err()
        .to_string()
        .contains("--force"));
    assert!(check_output(&pc2, true, (1, 3)).is_ok());
    let seq = dir.path().join("s.$F4.geo");
    std::fs::write(dir.path().join("s.0003.geo"), b"old").unwrap();
    let e = check_output(&seq, false, (1, 3)).unwrap_err().to_string();
    assert!(e.contains("s.0003.geo") && e.contains("--force"), "{e}");
    let e = check_output(&seq, false, (4, 9)).unwrap_err().to_string();
    assert!(
        e.contains("s.0003.geo") && e.contains("earlier sequence"),
        "frame 3 of the old sequence, outside 4..9, stops it too: {e}"
    );
    std::fs::write(dir.path().join("s.3.geo"), b"not of this pattern").unwrap();
    std::fs::remove_file(dir.path().join("s.0003.geo")).unwrap();
    assert!(check_output(&seq, false, (1, 3)).is_ok());
    assert!(check_output(&seq, true, (1, 3)).is_ok());
}

#[test]
fn an_unfinished_mdd_is_trimmed_to_its_finished_frames_when_dropped() {
    let g = sheet_garment();
    let n = g.output_points.len();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.mdd");
    let meta = CacheMeta::for_garment(&g, 3, 10, 24.0, UpAxis::Z);
    let mut w = create(&out, &meta).unwrap();
    for k in 0..4 {
        w.write_frame(&frame(n, k)).unwrap();
    }
    let partial = w.partial_path().to_path_buf();
    drop(w);
    let (times, frames) = mdd::read(&partial).unwrap();
    assert_eq!(times, [3.0 / 24.0, 4.0 / 24.0, 5.0 / 24.0, 6.0 / 24.0]);
    for (k, f) in frames.iter().enumerate() {
        let want: Vec<[f32; 3]> = frame(n, k).iter().map(text::to_f32).collect();
        assert_eq!(*f, want, "frame {k} moved back intact");
    }
    let len = std::fs::metadata(&partial).unwrap().len() as usize;
    assert_eq!(len, 8 + 4 * 4 + 4 * n * 12);
}

#[test]
fn topology_falls_back_to_triangles_through_first_output_points() {
    let mut g = sheet_garment();
    let given = g.output_faces.clone();
    assert_eq!(output_faces(&g).as_ref(), &given);
    // Without importer faces, and with a split vertex (point 9 shows particle 0 again).
    g.output_faces = OutputFaces::default();
    g.output_points.push(0);
    let f = output_faces(&g);
    assert_eq!(f.counts, vec![3; g.triangles.len()]);
    let flat: Vec<usize> = g.triangles.iter().flatten().copied().collect();
    assert_eq!(f.points, flat, "particle p is shown first by point p");
    assert_eq!(f.uvs.len(), flat.len());
    assert_eq!(f.uvs[0], g.corner_uvs[0][0]);
    // Triangles of a particle no point shows are left out.
    g.output_points = (0..8).collect();
    g.corner_uvs.clear();
    let f = output_faces(&g);
    let with_8 = g.triangles.iter().filter(|t| t.contains(&8)).count();
    assert!(with_8 > 0);
    assert_eq!(f.counts.len(), g.triangles.len() - with_8);
    assert!(f.points.iter().all(|&p| p < 8));
    assert!(f.uvs.is_empty());
}
