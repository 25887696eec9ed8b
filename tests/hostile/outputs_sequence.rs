//! `.geo` sequences: a re-bake with `--force` over a shorter range removes the old
//! sequence's frames it does not write again, and only those; without `--force` any
//! frame of an existing sequence stops the bake.
use crate::common::*;
use crate::support::*;

#[test]
fn a_forced_rebake_over_a_shorter_range_removes_only_the_old_frames_it_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let scene = fixture("sheet_small.gltf");
    let out = d.join("s.$F4.geo");
    let o = simulate(&scene, "1..6", &["-o", s(&out)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Files that look alike but are not frames of this pattern stay.
    let bystanders = ["s.7.geo", "s.0005.geo.bak", "t.0005.geo", "s.00005.geo"];
    for b in bystanders {
        std::fs::write(d.join(b), b"mine").unwrap();
    }
    let o = simulate(&scene, "2..3", &["-o", s(&out)]);
    assert_eq!(
        code(&o),
        2,
        "frames of the old sequence exist: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = simulate(&scene, "2..3", &["-o", s(&out), "--force"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = ["s.0002.geo", "s.0003.geo"]
        .iter()
        .chain(bystanders.iter())
        .map(|n| n.to_string())
        .collect();
    want.sort();
    assert_eq!(names, want);
}
