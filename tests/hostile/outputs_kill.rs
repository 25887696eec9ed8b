//! A SIGKILL at any instant leaves every format's partial cache valid: killed right after
//! a frame was reported, at whatever point of the next frame's write that falls. The
//! random-instant version over all formats is `scripts/kill-partials.sh`.
use crate::common::*;
use crate::support::*;

#[test]
fn a_sigkill_mid_bake_leaves_a_valid_partial_cache_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("skirt_on_character.gltf");
    for ext in FORMATS {
        for after in [1, 3, 6] {
            let out = dir.path().join(format!("k{after}.{ext}"));
            let mut child = spawn_bake(&scene, "1..200", &out, &[]);
            let _events = wait_frames(&mut child, after);
            kill(&mut child);
            let frames =
                partial_frames(&out).unwrap_or_else(|e| panic!("{ext} after {after}: {e}"));
            if ext == "mdd" {
                // Laid out for the whole range; the unfinished frames read as zeros.
                assert_eq!(frames, 200, "{ext}");
            } else {
                assert!(
                    frames >= after,
                    "{ext}: {frames} frames kept, {after} reported"
                );
            }
            assert!(!out.exists(), "{ext}: nothing published");
        }
    }
}

#[test]
fn an_orderly_stop_trims_the_mdd_partial_to_its_finished_frames() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trim.mdd");
    let mut child = spawn_bake(&fixture("skirt_on_character.gltf"), "1..200", &out, &[]);
    let mut events = wait_frames(&mut child, 3);
    // SIGINT: stop at the next frame boundary.
    let pid = child.id() as i32;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut events, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let reported = 3 + rest.matches("\"event\":\"frame\"").count();
    let (times, frames) = drape::cache::mdd::read(&partial(&out)).unwrap();
    assert_eq!(frames.len(), reported);
    assert_eq!(times.len(), reported);
    assert_eq!(times[1], 2.0 / 24.0, "frame 2 at 2/24 s");
    let len = std::fs::metadata(partial(&out)).unwrap().len() as usize;
    assert_eq!(
        len,
        8 + 4 * reported + 12 * reported * frames[0].len(),
        "no bytes beyond"
    );
}
