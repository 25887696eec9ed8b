//! The frame loop: stops, resumption, events, and preparation from a scene.
use super::*;
use crate::cache::pc2;
use crate::fixtures::{sheet, SheetSpec};
use crate::model::{ClothModel, UvScale};
use crate::scene::Material;
use std::path::Path;

fn garment() -> Garment {
    sheet(&SheetSpec {
        n: 8,
        ..SheetSpec::default()
    })
}

/// A bake of `g` over frames 1..=8 into `out`.
fn bake_into<'a>(g: &'a Garment, out: &Path) -> Bake<'a> {
    let material = Material::default();
    let model = ClothModel::build(g, UvScale::Auto, material.density).unwrap();
    let sim = Simulator::new(model, &material, &g.pin, crate::bench::default_params());
    let transform = CacheTransform::new(g, UpAxis::Y, UpAxis::Y).unwrap();
    let track = Track::new(g, sim).with_cache(out.to_path_buf(), transform);
    Bake::new(vec![track], (1, 8), 24.0, UpAxis::Y)
}

/// Records every event; requests `stop` once `stop_after` frames are done.
#[derive(Default)]
struct Log {
    events: Vec<String>,
    stop_after: Option<(usize, Stop)>,
}

impl Observer for Log {
    fn start(&mut self, s: &Start) {
        self.events
            .push(format!("start {:?} {}", s.frames, s.garments.len()));
    }
    fn frame(&mut self, f: &Frame) {
        let steps = f.sum().steps;
        self.events.push(format!(
            "frame {} {}/{} steps>0:{}",
            f.frame,
            f.done,
            f.total,
            steps > 0
        ));
        if let Some((k, stop)) = &self.stop_after {
            if f.done == *k {
                stop.request();
            }
        }
    }
    fn warning(&mut self, m: &str) {
        self.events.push(format!("warning {m}"));
    }
    fn done(&mut self, o: &Outputs) {
        self.events
            .push(format!("done {} {}", o.paths.len(), o.frames));
    }
    fn kept(&mut self, o: &Outputs) {
        self.events
            .push(format!("kept {} {}", o.paths.len(), o.frames));
    }
}

#[test]
fn a_stop_after_frame_k_leaves_k_frames_and_running_again_finishes_the_same_cache() {
    let dir = tempfile::tempdir().unwrap();
    let g = garment();
    let whole = dir.path().join("whole.pc2");
    let outcome = bake_into(&g, &whole).run(&mut (), &Stop::new()).unwrap();
    assert_eq!(outcome, Outcome::Finished);

    let out = dir.path().join("stopped.pc2");
    let mut bake = bake_into(&g, &out);
    let stop = Stop::new();
    let mut log = Log {
        stop_after: Some((3, stop.clone())),
        ..Log::default()
    };
    let outcome = bake.run(&mut log, &stop).unwrap();
    let Outcome::Stopped { after_frame, kept } = outcome else {
        panic!("not stopped: {outcome:?}");
    };
    assert_eq!(after_frame, 3);
    assert!(kept.contains("keeps frames 1..3"), "{kept}");
    let partial = crate::cache::partial_path(&out);
    assert_eq!(pc2::read(&partial).unwrap().2.len(), 3);
    assert!(!out.exists(), "a stopped bake publishes nothing");
    assert_eq!(log.events.last().unwrap(), "kept 1 3");
    assert!(log
        .events
        .iter()
        .any(|e| e.starts_with("warning garment 'Sheet': the partial")));

    // Run again: the bake continues with frame 4 and ends with the uninterrupted cache.
    let mut log = Log::default();
    assert_eq!(bake.run(&mut log, &Stop::new()).unwrap(), Outcome::Finished);
    assert_eq!(log.events.first().unwrap(), "frame 4 4/8 steps>0:true");
    assert_eq!(log.events.last().unwrap(), "done 1 8");
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&whole).unwrap());
    assert!(!partial.exists());
}

#[test]
fn the_observer_sees_start_the_first_frame_as_given_every_simulated_frame_and_done() {
    let dir = tempfile::tempdir().unwrap();
    let g = garment();
    let mut log = Log::default();
    bake_into(&g, &dir.path().join("s.pc2"))
        .run(&mut log, &Stop::new())
        .unwrap();
    let mut expected = vec![
        "start (1, 8) 1".to_string(),
        "frame 1 1/8 steps>0:false".to_string(),
    ];
    expected.extend((2..=8).map(|f| format!("frame {f} {f}/8 steps>0:true")));
    expected.push("done 1 8".into());
    assert_eq!(log.events, expected);
}

#[test]
fn the_cache_holds_the_garment_as_given_then_each_simulated_frame() {
    let dir = tempfile::tempdir().unwrap();
    let g = garment();
    let out = dir.path().join("s.pc2");
    let mut bake = bake_into(&g, &out);
    bake.run(&mut (), &Stop::new()).unwrap();
    let (start, _, frames) = pc2::read(&out).unwrap();
    assert_eq!((start, frames.len()), (1.0, 8));
    let as_f32 = |p: &Vec3| [p.x as f32, p.y as f32, p.z as f32];
    let first: Vec<[f32; 3]> = g.positions.iter().map(as_f32).collect();
    assert_eq!(frames[0], first);
    let last: Vec<[f32; 3]> = bake.tracks()[0]
        .sim
        .positions()
        .iter()
        .map(as_f32)
        .collect();
    assert_eq!(frames[7], last);
    assert_eq!(bake.frames_done(), 8);
}

#[test]
fn control_forces_act_only_on_their_frame_intervals() {
    let g = garment();
    let material = Material::default();
    let build = || {
        let model = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
        Simulator::new(model, &material, &g.pin, crate::bench::default_params())
    };
    let run = |forces: Vec<Vec<Vec3>>| {
        let mut track = Track::new(&g, build());
        track.control(build(), forces);
        let mut bake = Bake::new(vec![track], (1, 3), 24.0, UpAxis::Y);
        bake.run(&mut (), &Stop::new()).unwrap();
        bake.tracks()[0].sim.positions().to_vec()
    };
    let plain = run(Vec::new());
    let none = vec![Vec3::zeros(); g.positions.len()];
    assert_eq!(run(vec![none.clone(), none.clone()]), plain);
    let up = vec![Vec3::new(0.0, 1.0, 0.0); g.positions.len()];
    let pushed = run(vec![up]);
    let rise: f64 = pushed.iter().zip(&plain).map(|(a, b)| a.y - b.y).sum();
    assert!(
        rise > 0.0,
        "an upward force in the first interval lifts the sheet: {rise}"
    );
}

#[test]
fn preparing_a_scene_without_frames_or_fps_uses_the_defaults_and_caches_beside_it() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sheet_small.gltf");
    let selected = crate::io::select(&scene, &[], &[], None).unwrap();
    let bake = Bake::prepare(&scene, &selected, &BakeSettings::default()).unwrap();
    assert_eq!((bake.frames(), bake.fps()), (DEFAULT_FRAMES, DEFAULT_FPS));
    let t = &bake.tracks()[0];
    let expected = scene.with_file_name(format!("{}.pc2", t.garment.name));
    assert_eq!(t.output(), Some(expected.as_path()));
}

#[test]
fn two_garments_writing_one_cache_is_a_usage_error() {
    let (a, mut b) = (garment(), garment());
    b.name = "Other".into();
    let garments = [a, b];
    let dir = Path::new("/tmp");
    let one = Some(Path::new("/tmp/one.pc2"));
    let e = outputs::output_paths(one, dir, &garments, &[]).unwrap_err();
    assert!(e.to_string().contains("{garment}"), "{e}");
    assert_eq!(e.exit_code(), 2);
    let each = Some(Path::new("/tmp/{garment}.pc2"));
    let paths = outputs::output_paths(each, dir, &garments, &[]).unwrap();
    assert_eq!(paths[1], Path::new("/tmp/Other.pc2"));
    let beside = outputs::output_paths(None, dir, &garments, &[]).unwrap();
    assert_eq!(beside[0], Path::new("/tmp/Sheet.pc2"));
}

#[test]
fn a_stop_raised_while_a_frame_is_simulated_ends_it_with_interrupted() {
    let g = garment();
    let material = Material::default();
    let model = ClothModel::build(&g, UvScale::Auto, material.density).unwrap();
    let mut sim = Simulator::new(model, &material, &g.pin, crate::bench::default_params());
    let stop = Stop::new();
    sim.set_stop(stop.clone());
    advance_frame(&mut sim, None, 24.0).unwrap();
    // Raised on the simulator's flag between two of its steps, as a signal arriving in the
    // middle of a frame is: the frame is abandoned, whatever the frame loop checks.
    stop.request();
    let time = sim.time();
    match advance_frame(&mut sim, None, 24.0) {
        Err(Error::Interrupted(m)) => assert!(m.contains("inside a frame"), "{m}"),
        other => panic!("expected an interruption, got {other:?}"),
    }
    assert_eq!(sim.time(), time, "no step of the abandoned frame was taken");
}
