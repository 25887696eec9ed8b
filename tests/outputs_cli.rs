//! Every cache format through the real binary: determinism, agreement between formats,
//! the partial cache after a full disk or a signal, up-front output checks, the report
//! and the help text (issue 5, "[4 of 7] Outputs"). The consuming programs (Blender, USD)
//! read the caches in tests/python.
mod common;
use common::*;
use drape::cache::{mdd, pc2};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FORMATS: [&str; 4] = ["pc2", "mdd", "usda", "$F4.geo"];

/// Bakes `scene` frames `frames` to `dir/<stem>.<ext>` with extra flags; asserts exit 0.
fn bake(scene: &Path, frames: &str, out: &Path, extra: &[&str]) {
    let mut args = vec!["simulate", s(scene), "--frames", frames, "-o", s(out)];
    args.extend_from_slice(&["--progress", "none"]);
    args.extend_from_slice(extra);
    let o = drape(&args);
    assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
}

/// Every file a bake to `out` produced, in order (a `.geo` sequence: its frame files).
fn files_of(out: &Path, frames: std::ops::RangeInclusive<i32>) -> Vec<PathBuf> {
    let name = out.file_name().unwrap().to_str().unwrap();
    if name.contains("$F4") {
        frames
            .map(|f| out.with_file_name(name.replace("$F4", &format!("{f:04}"))))
            .collect()
    } else {
        vec![out.to_path_buf()]
    }
}

/// Points of one `.geo` file's `P` attribute (Houdini's flat key/value arrays).
fn geo_points(path: &Path) -> Vec<[f32; 3]> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let get = |list: &Value, key: &str| -> Value {
        let a = list.as_array().unwrap();
        let i = a.iter().position(|x| x == key).unwrap();
        a[i + 1].clone()
    };
    let p = get(&get(&v, "attributes"), "pointattributes")[0].clone();
    get(&get(&p[1], "values"), "tuples")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| [0, 1, 2].map(|i| t[i].as_f64().unwrap() as f32))
        .collect()
}

#[test]
fn every_format_is_byte_identical_for_one_and_two_threads() {
    // A fixture with collisions (cloth falling onto the animated character): contacts,
    // friction, self-contact and adaptive steps all take part.
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("scarf_on_character.gltf");
    for ext in FORMATS {
        let mut bytes = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("t{threads}.{ext}"));
            let report = dir.path().join(format!("t{threads}.json"));
            bake(
                &scene,
                "1..12",
                &out,
                &["--threads", threads, "--report", s(&report)],
            );
            let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
            let contacts: u64 = r["per_frame"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["contacts"].as_u64().unwrap())
                .sum();
            assert!(contacts > 0, "{ext}: the cloth touched the body");
            let files = files_of(&out, 1..=12);
            bytes.push(
                files
                    .iter()
                    .map(|f| std::fs::read(f).unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        assert!(!bytes[0].is_empty());
        assert!(bytes[0] == bytes[1], "{ext}: --threads 1 and 2 differ");
    }
}

#[test]
fn every_format_holds_the_same_f32_positions() {
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    let d = dir.path();
    for ext in FORMATS {
        bake(&scene, "4..9", &d.join(format!("c.{ext}")), &[]);
    }
    let (start, _, from_pc2) = pc2::read(&d.join("c.pc2")).unwrap();
    assert_eq!(start, 4.0);
    assert_eq!(from_pc2.len(), 6);
    let (times, from_mdd) = mdd::read(&d.join("c.mdd")).unwrap();
    let want: Vec<f32> = (4..=9).map(|f| (f64::from(f) / 24.0) as f32).collect();
    assert_eq!(times, want, "MDD time = frame / fps");
    assert_eq!(from_mdd, from_pc2);
    for (k, f) in (4..=9).enumerate() {
        let geo = geo_points(&d.join(format!("c.{f:04}.geo")));
        assert_eq!(geo, from_pc2[k], "frame {f}");
    }
    let usda = std::fs::read_to_string(d.join("c.usda")).unwrap();
    let first = format!("        4: [({}, ", from_pc2[0][0][0]);
    assert!(
        usda.contains(&first),
        "USD sample 4 starts with point 0: {first}"
    );
}

/// JSON events of a run's stderr.
fn events(o: &std::process::Output) -> Vec<Value> {
    stderr(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect()
}

#[test]
fn unusable_outputs_exit_2_before_any_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("file"), b"").unwrap();
    let readonly = d.join("readonly");
    std::fs::create_dir(&readonly).unwrap();
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (d.join("missing/c.pc2"), "does not exist"),
        (d.join("file/c.pc2"), "not a directory"),
        (d.join("c.geo"), "$F"),
        (d.join("c.obj"), "unknown cache format"),
        (d.join("c.usdc"), ".usda"),
    ];
    let probe = |dir: &Path| std::fs::write(dir.join("probe"), b"").is_ok();
    set_mode(&readonly, 0o555);
    if probe(&readonly) {
        println!("note: running as root, chmod 555 does not stop writes; that case is skipped");
    } else {
        cases.push((readonly.join("c.pc2"), "cannot write"));
    }
    // A read-only file system stops root too.
    if Path::new("/sys").is_dir() && !probe(Path::new("/sys")) {
        cases.push((PathBuf::from("/sys/drape-test.pc2"), "cannot write"));
    }
    for (out, needle) in cases {
        let scene = fixture("sheet_small.gltf");
        let o = drape(&["simulate", s(&scene), "-o", s(&out), "--progress", "json"]);
        let ev = events(&o);
        let what = out.display();
        assert_eq!(code(&o), 2, "{what}: {}", stderr(&o));
        assert!(
            ev.iter().all(|e| e["event"] != "frame"),
            "{what}: no frame was simulated"
        );
        let last = ev.last().unwrap();
        assert_eq!(
            (&last["event"], &last["code"]),
            (&"error".into(), &2.into())
        );
        let m = last["message"].as_str().unwrap();
        assert!(m.contains(needle), "{what}: {m}");
        assert!(
            m.contains(out.file_name().unwrap().to_str().unwrap()),
            "names the file: {m}"
        );
    }
    set_mode(&readonly, 0o755);
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        2,
        "nothing was created"
    );
}

#[test]
fn flag_errors_of_a_json_progress_run_are_json_events() {
    let scene = fixture("sheet_small.gltf");
    for bad in [
        vec![
            "simulate",
            s(&scene),
            "--progress",
            "json",
            "--no-such-flag",
        ],
        vec!["simulate", s(&scene), "--progress=json", "--up", "x"],
        vec!["simulate", "--progress", "json"],
    ] {
        let o = drape(&bad);
        assert_eq!(code(&o), 2, "{bad:?}");
        let ev = events(&o);
        assert_eq!(ev.len(), 1, "{bad:?}: one JSON line: {}", stderr(&o));
        assert_eq!(
            (&ev[0]["event"], &ev[0]["code"]),
            (&"error".into(), &2.into())
        );
        assert!(!ev[0]["message"].as_str().unwrap().is_empty());
    }
    // Help still prints as text, exit 0.
    let o = drape(&["simulate", "--progress", "json", "--help"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("Usage"));
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_full_disk_exits_3_and_keeps_the_finished_frames() {
    // `ulimit -f` caps file sizes; with SIGXFSZ ignored (inherited through exec) a write
    // past the cap fails with EFBIG, as a full disk fails with ENOSPC.
    let dir = tempfile::tempdir().unwrap();
    let scene = fixture("sheet_small.gltf");
    for (ext, kib) in [("pc2", 8), ("mdd", 8), ("usda", 48)] {
        let out = dir.path().join(format!("full.{ext}"));
        let script = format!(
            "trap '' XFSZ; ulimit -f {kib}; exec '{}' simulate '{}' --frames 1..40 -o '{}' \
             --progress json",
            env!("CARGO_BIN_EXE_drape"),
            s(&scene),
            s(&out)
        );
        let o = Command::new("bash").args(["-c", &script]).output().unwrap();
        let ev = events(&o);
        assert_eq!(code(&o), 3, "{ext}: {}", stderr(&o));
        let frames = ev.iter().filter(|e| e["event"] == "frame").count();
        if ext == "mdd" {
            // Laid out for the whole range up front: the cap is hit before frame 1.
            assert_eq!(frames, 0, "{ext}");
            assert!(mdd::read(&dir.path().join("full.mdd.partial"))
                .unwrap()
                .1
                .is_empty());
            continue;
        }
        assert!(
            (1..40).contains(&frames),
            "{ext}: the cap hit mid-bake ({frames} frames)"
        );
        let partial = dir.path().join(format!("full.{ext}.partial"));
        let kept = match ext {
            "pc2" => pc2::read(&partial).unwrap().2.len(),
            "mdd" => mdd::read(&partial).unwrap().1.len(),
            _ => {
                let text = std::fs::read_to_string(&partial).unwrap();
                assert!(text.trim_end().ends_with(" };}"), "the USD text is closed");
                usd_samples(&text)
            }
        };
        assert_eq!(
            kept, frames,
            "{ext}: the partial cache keeps every reported frame"
        );
        // (A checkpoint that found no room is warned about first.)
        let warning = (ev.iter())
            .filter(|e| e["event"] == "warning")
            .find(|e| e["message"].as_str().unwrap().contains("partial cache"))
            .unwrap();
        let msg = warning["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("keeps frames 1..{frames}")),
            "{ext}: {msg}"
        );
        assert!(!out.exists());
    }
}

/// Number of `points.timeSamples` entries of a `.usda` cache.
fn usd_samples(text: &str) -> usize {
    let points = &text[text.find("points.timeSamples = {").unwrap()..];
    points
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("        "))
        .count()
}

/// Starts a long bake of the 2,500-particle sheet with JSON progress, sends SIGINT once
/// `after` frames are reported; returns (exit code, frames reported, events).
fn bake_and_interrupt(out: &Path, after: u64, extra: &[&str]) -> (i32, u64, Vec<Value>) {
    let scene = fixture("sheet_2corner.gltf");
    let mut child = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["simulate", s(&scene), "--frames", "1..2000", "-o", s(out)])
        .args(["--progress", "json"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut events = Vec::new();
    let mut done = 0;
    let mut sent = false;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let e: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if e["event"] == "frame" {
            done = e["done"].as_u64().unwrap();
            if done >= after && !sent {
                let pid = child.id().to_string();
                assert!(Command::new("kill")
                    .args(["-INT", &pid])
                    .status()
                    .unwrap()
                    .success());
                sent = true;
            }
        }
        events.push(e);
    }
    let status = child.wait().unwrap();
    assert!(sent, "the bake ended before {after} frames");
    (status.code().unwrap_or(-1), done, events)
}

#[test]
fn sigint_stops_at_a_frame_boundary_keeping_every_reported_frame() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    for ext in ["usda", "$F4.geo"] {
        let out = dir.path().join(format!("int.{ext}"));
        let (exit, k, ev) = bake_and_interrupt(&out, 2, &["--report", s(&report)]);
        assert_eq!(exit, 130, "{ext}: {ev:?}");
        let last = ev.last().unwrap();
        assert_eq!(
            (&last["event"], &last["code"]),
            (&"error".into(), &130.into())
        );
        assert!(last["message"].as_str().unwrap().contains(".partial"));
        let kept = if ext == "usda" {
            let text = std::fs::read_to_string(dir.path().join("int.usda.partial")).unwrap();
            assert!(text.contains(&format!("endTimeCode = {k} ")));
            usd_samples(&text)
        } else {
            let partial: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().into_string().unwrap())
                .filter(|n| n.starts_with("int.") && n.ends_with(".geo.partial"))
                // Not the sequence's claim file, `int.$F4.geo.partial`.
                .filter(|n| !n.contains('$'))
                .collect();
            for f in 1..=k {
                let p = dir.path().join(format!("int.{f:04}.geo.partial"));
                assert_eq!(geo_points(&p).len(), 2500, "frame {f} is complete");
            }
            partial.len()
        };
        assert_eq!(
            kept as u64, k,
            "{ext}: partial frames = last progress event"
        );
        let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(r["status"], "interrupted");
        assert_eq!(r["exit_code"], 130);
        assert_eq!(r["frames_written"], k);
        assert_eq!(r["per_frame"].as_array().unwrap().len() as u64, k - 1);
    }
}

#[test]
fn a_second_signal_stops_at_once_and_the_pc2_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("twice.pc2");
    let scene = fixture("sheet_2corner.gltf");
    let mut child = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["simulate", s(&scene), "--frames", "1..2000", "-o", s(&out)])
        .args(["--progress", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut done = 0;
    while done < 2 {
        let e: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if e["event"] == "frame" {
            done = e["done"].as_u64().unwrap();
        }
    }
    let pid = child.id().to_string();
    for _ in 0..2 {
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
    }
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).expect("JSON lines only"))
        .collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let last = rest.last().unwrap();
    assert_eq!(
        (&last["event"], &last["code"]),
        (&"error".into(), &130.into())
    );
    let frames = pc2::read(&dir.path().join("twice.pc2.partial")).unwrap().2;
    assert!(frames.len() >= 2, "{} frames", frames.len());
    assert!(frames.iter().all(|f| f.len() == 2500));
}

#[test]
fn report_has_per_frame_solver_figures_per_garment() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = dir.path().join("c.pc2");
    bake(
        &fixture("sheet_small.gltf"),
        "1..5",
        &out,
        &["--report", s(&report)],
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["status"], "ok");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["frames"], serde_json::json!([1, 5]));
    assert_eq!(r["outputs"], serde_json::json!([s(&out)]));
    assert_eq!(r["frames_written"], 5);
    let frames = r["per_frame"].as_array().unwrap();
    assert_eq!(frames.len(), 4, "one entry per simulated frame");
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(f["frame"], k as u64 + 2);
        for key in [
            "steps",
            "cg_iterations",
            "max_residual",
            "rejections",
            "contacts",
            "seconds",
            "min_step",
        ] {
            assert!(f[key].is_number(), "per_frame[{k}] lacks {key}: {f}");
        }
        assert!(f["steps"].as_u64().unwrap() >= 1);
        assert!(f["cg_iterations"].as_u64().unwrap() >= 1);
        let g = &f["garments"][0];
        assert_eq!(g["name"], "SheetSmall");
        assert_eq!(
            g["cg_iterations"], f["cg_iterations"],
            "one garment: same figures"
        );
    }
}

/// Option blocks of a command's help: (flag line, description lines). Short help puts
/// the description on the flag line itself; the test reads both together.
fn option_blocks(help: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut in_options = false;
    for line in help.lines() {
        if line.starts_with("Options:") {
            in_options = true;
            continue;
        }
        if !in_options || line.is_empty() && blocks.is_empty() {
            continue;
        }
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if (2..=6).contains(&indent) && t.starts_with('-') {
            blocks.push((t.to_string(), String::new()));
        } else if let Some(b) = blocks.last_mut() {
            b.1.push_str(t);
            b.1.push(' ');
        }
    }
    blocks
}

#[test]
fn help_explains_every_flag_with_its_default() {
    for cmd in ["simulate", "inspect", "bench"] {
        let o = drape(&[cmd, "--help"]);
        assert_eq!(code(&o), 0);
        let help = stdout(&o);
        let blocks = option_blocks(&help);
        assert!(blocks.len() >= 2, "{cmd}: {help}");
        for (flag, text) in blocks {
            if flag.starts_with("-h, --help") || flag.starts_with("-V, --version") {
                continue;
            }
            let all = format!("{flag} {text}");
            assert!(all.len() > 40, "{cmd} {flag}: explained");
            assert!(
                all.to_lowercase().contains("default"),
                "{cmd} {flag}: says its default: {all}"
            );
        }
    }
    let o = drape(&["--help"]);
    assert!(
        stdout(&o).contains("130"),
        "top-level help lists the exit codes"
    );
}
