//! Flags whose values would make a bake that never ends or fills the disk are refused
//! before any work (exit 2, the accepted range named); negative frame ranges work.
use crate::common::*;

fn refused(extra: &[&str], needle: &str) {
    refused_in("skirt.gltf", extra, needle);
}

fn refused_in(scene: &str, extra: &[&str], needle: &str) {
    let scene = fixture(scene);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pc2");
    let mut args = vec!["simulate", s(&scene), "-o", s(&out), "--progress", "json"];
    args.extend_from_slice(extra);
    let o = drape(&args);
    assert_eq!(code(&o), 2, "{extra:?}: {}", stderr(&o));
    let m = stderr(&o);
    assert!(
        !m.contains("\"event\":\"frame\""),
        "{extra:?}: nothing simulated"
    );
    assert!(m.contains(needle), "{extra:?}: {m}");
    assert!(!out.exists() && !dir.path().join("c.pc2.partial").exists());
}

#[test]
fn time_steps_and_frame_rates_outside_their_ranges_are_refused() {
    refused(&["--max-step", "1e-30"], "1e-5..1");
    refused(&["--max-step", "0"], "1e-5..1");
    refused(&["--max-step", "NaN"], "1e-5..1");
    refused(&["--fps", "1e-300"], "1..1000");
    refused(&["--fps", "1e6"], "1..1000");
    refused(&["--fps", "-24"], "1..1000");
}

#[test]
fn a_frame_range_past_the_cache_budget_is_refused_naming_its_size() {
    // 100,000,000 frames: more than one bake writes.
    refused(&["--frames", "1..100000000"], "1000000");
    // 999,999 frames of the 2,500-point sheet: 27.9 GiB of point data.
    refused_in(
        "sheet_2corner.gltf",
        &["--frames", "1..999999"],
        "27.9 GiB of cache",
    );
}

#[test]
fn negative_frame_ranges_bake() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("neg.pc2");
    let scene = fixture("sheet_small.gltf");
    let o = drape(&[
        "simulate",
        s(&scene),
        "--frames",
        "-5..-3",
        "-o",
        s(&out),
        "--progress",
        "none",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (start, _, frames) = drape::cache::pc2::read(&out).unwrap();
    assert_eq!((start, frames.len()), (-5.0, 3));
}
