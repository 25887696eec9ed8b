//! Manifests read and refused, shot command lines, the batch's exit code and the text of
//! each scheduler's job (issue 54).
use super::emit::{job_name, opencue, openjd, sh_quote, slurm, task_command};
use super::local::{ShotResult, Status};
use super::manifest::Manifest;
use super::plan::{continue_flags, simulate_args, threads_per_job, Layout};
use super::summary::{exit_code, table};
use std::path::{Path, PathBuf};

const MANIFEST: &str = r#"{ "shots": [
    {"name": "sh010", "scene": "sh010/scene.usda", "out": "cache/sh010.pc2",
     "frames": "1001..1240", "options": ["--material", "denim"]},
    {"name": "sh020", "scene": "../shared/it's.gltf", "out": "./cache/../cache/sh020.usda"}
] }"#;

fn manifest() -> Manifest {
    Manifest::parse(MANIFEST, Path::new("/show/batch/night.json")).unwrap()
}

fn error(text: &str) -> String {
    Manifest::parse(text, Path::new("/show/m.json"))
        .unwrap_err()
        .to_string()
}

#[test]
fn paths_are_made_absolute_against_the_manifests_folder() {
    let m = manifest();
    assert_eq!(m.stem(), "night");
    let (a, b) = (&m.shots[0], &m.shots[1]);
    assert_eq!(a.scene, PathBuf::from("/show/batch/sh010/scene.usda"));
    assert_eq!(a.out, PathBuf::from("/show/batch/cache/sh010.pc2"));
    assert_eq!(a.frames, Some((1001, 1240)));
    assert_eq!(a.options, ["--material", "denim"]);
    assert_eq!(b.scene, PathBuf::from("/show/shared/it's.gltf"));
    assert_eq!(b.out, PathBuf::from("/show/batch/cache/sh020.usda"));
    assert_eq!(b.frames, None);
}

#[test]
fn unknown_keys_are_errors_naming_the_key() {
    let e =
        error(r#"{"shots": [{"name": "a", "scene": "s.gltf", "out": "a.pc2", "frame": "1..2"}]}"#);
    assert!(e.contains("unknown field `frame`"), "{e}");
    assert!(e.starts_with("/show/m.json"), "{e}");
    let e = error(r#"{"shots": [], "jobs": 2}"#);
    assert!(e.contains("unknown field `jobs`"), "{e}");
}

#[test]
fn duplicate_names_and_outputs_are_refused() {
    let e = error(
        r#"{"shots": [{"name": "a", "scene": "s.gltf", "out": "a.pc2"},
                      {"name": "a", "scene": "s.gltf", "out": "b.pc2"}]}"#,
    );
    assert!(e.contains("shots 1 and 2 are both named 'a'"), "{e}");
    let e = error(
        r#"{"shots": [{"name": "a", "scene": "s.gltf", "out": "c/a.pc2"},
                      {"name": "b", "scene": "t.gltf", "out": "./c/../c/a.pc2"}]}"#,
    );
    assert!(
        e.contains("shots 'a' and 'b' both write /show/c/a.pc2"),
        "{e}"
    );
}

#[test]
fn bad_shots_are_refused_with_what_to_do() {
    let shot = |fields: &str| error(&format!(r#"{{"shots": [{{{fields}}}]}}"#));
    assert!(error(r#"{"shots": []}"#).contains("\"shots\" is empty"));
    assert!(shot(r#""name": "a", "scene": "s.gltf""#).contains("missing field `out`"));
    assert!(shot(r#""name": "a b", "scene": "s", "out": "o.pc2""#).contains("rename the shot"));
    assert!(shot(r#""name": "-a", "scene": "s", "out": "o.pc2""#).contains("rename the shot"));
    assert!(shot(r#""name": "", "scene": "s", "out": "o.pc2""#).contains("is empty"));
    let e = shot(r#""name": "a", "scene": "s", "out": "o.pc2", "frames": "9..1""#);
    assert!(e.contains("\"frames\" '9..1' is not a range"), "{e}");
    let e = shot(r#""name": "a", "scene": "s", "out": "o.pc2", "options": ["--threads=4"]"#);
    assert!(e.contains("--threads") && e.contains("--jobs"), "{e}");
    let e = shot(r#""name": "a", "scene": "s", "out": "o.pc2", "options": ["-o", "x"]"#);
    assert!(e.contains("the shot's \"out\""), "{e}");
    assert!(shot(r#""name": "a", "scene": "", "out": "o.pc2""#).contains("\"scene\" is empty"));
}

#[test]
fn a_shots_command_line_is_simulate_with_absolute_paths_and_the_continue_flag() {
    let m = manifest();
    let words = |a: Vec<std::ffi::OsString>| {
        a.into_iter()
            .map(|w| w.into_string().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(simulate_args(&m.shots[0], continue_flags(false))),
        [
            "simulate",
            "/show/batch/sh010/scene.usda",
            "-o",
            "/show/batch/cache/sh010.pc2",
            "--frames",
            "1001..1240",
            "--material",
            "denim",
            continue_flags(false)[0],
        ]
    );
    assert_eq!(continue_flags(true), ["--force"]);
}

#[test]
fn threads_are_shared_between_the_jobs() {
    assert_eq!(threads_per_job(8, 1), 8);
    assert_eq!(threads_per_job(8, 3), 2);
    assert_eq!(threads_per_job(2, 4), 1);
    assert_eq!(threads_per_job(2, 0), 2);
}

#[test]
fn logs_and_the_summary_sit_beside_the_manifest_by_default() {
    let m = manifest();
    let l = Layout::new(&m, None);
    assert_eq!(l.summary, PathBuf::from("/show/batch/night.summary.json"));
    assert_eq!(
        l.log(&m.shots[1]),
        PathBuf::from("/show/batch/night.logs/sh020.log")
    );
    assert_eq!(
        Layout::new(&m, Some(Path::new("s.json"))).summary,
        PathBuf::from("s.json")
    );
}

fn result(name: &str, status: Status, code: Option<i32>) -> ShotResult {
    ShotResult {
        name: name.into(),
        status,
        exit_code: code,
        frames: Some(24),
        seconds: 1.25,
        max_strain: Some(0.0412),
        error: None,
        log: "l".into(),
        report: "r".into(),
    }
}

#[test]
fn the_batch_exits_with_the_most_severe_code_of_its_shots() {
    let ok = result("a", Status::Ok, Some(0));
    let done = result("b", Status::Done, None);
    let bad = result("c", Status::Failed, Some(2));
    let diverged = result("d", Status::Failed, Some(3));
    let killed = result("e", Status::Failed, Some(137));
    let stopped = result("f", Status::Interrupted, Some(130));
    assert_eq!(exit_code(&[ok.clone(), done.clone()], false), 0);
    assert_eq!(exit_code(&[ok.clone(), bad.clone()], false), 2);
    assert_eq!(exit_code(&[bad.clone(), diverged.clone()], false), 3);
    assert_eq!(exit_code(&[stopped.clone(), bad.clone()], false), 2);
    assert_eq!(exit_code(std::slice::from_ref(&stopped), false), 130);
    assert_eq!(exit_code(&[diverged, killed, bad], false), 1);
    assert_eq!(exit_code(&[ok, done], true), 130);
}

#[test]
fn the_table_has_a_row_per_shot() {
    let t = table(&[
        result("sh010", Status::Ok, Some(0)),
        result("sh020", Status::Done, None),
    ]);
    let rows: Vec<&str> = t.lines().collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[0].starts_with("shot") && rows[0].ends_with("worst stretch"));
    let cells: Vec<&str> = rows[1].split_whitespace().collect();
    assert_eq!(cells, ["sh010", "ok", "0", "24", "1.2", "4.1", "%"]);
    assert!(rows[2].starts_with("sh020  done"), "{t}");
}

#[test]
fn shell_words_are_quoted_only_when_needed() {
    assert_eq!(sh_quote("/a/b-c_d.pc2"), "/a/b-c_d.pc2");
    assert_eq!(sh_quote("it's here"), r"'it'\''s here'");
    assert_eq!(sh_quote(""), "''");
    assert_eq!(sh_quote("$F4"), "'$F4'");
}

#[test]
fn the_openjd_template_has_one_step_bake_with_a_task_per_shot() {
    let m = manifest();
    let text = openjd::template(&m, Path::new("/opt/drape")).unwrap();
    let t: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(t["specificationVersion"], "jobtemplate-2023-09");
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["name"], "Bake");
    let p = &steps[0]["parameterSpace"]["taskParameterDefinitions"][0];
    assert_eq!(p["name"], "Shot");
    assert_eq!(p["range"], serde_json::json!(["sh010", "sh020"]));
    let script = steps[0]["script"]["embeddedFiles"][0]["data"]
        .as_str()
        .unwrap();
    let flag = continue_flags(false)[0];
    assert!(script.contains(&format!(
        "    sh010)\n        exec /opt/drape simulate /show/batch/sh010/scene.usda -o \
         /show/batch/cache/sh010.pc2 --frames 1001..1240 --material denim {flag}"
    )));
    assert!(script.contains(r"'/show/shared/it'\''s.gltf'"), "{script}");
}

#[test]
fn the_slurm_script_is_a_requeueable_array_with_a_shot_per_index() {
    let m = manifest();
    let s = slurm::script(&m, Path::new("/opt/drape"), Path::new("/farm/logs")).unwrap();
    assert!(s.starts_with("#!/bin/bash\n#SBATCH --job-name=drape-night\n"));
    for line in [
        "#SBATCH --array=0-1",
        "#SBATCH --requeue",
        "#SBATCH --output=/farm/logs/%x_%A_%a.log",
    ] {
        assert!(s.lines().any(|l| l == line), "{line} missing:\n{s}");
    }
    assert!(
        s.contains("#     1  sh020  /show/batch/cache/sh020.usda\n"),
        "{s}"
    );
    assert!(s.contains("case \"${SLURM_ARRAY_TASK_ID:?run this script with sbatch}\" in\n    0)\n"));
    assert!(
        s.contains("--material denim --resume --progress plain ${threads[@]+\"${threads[@]}\"} ;;"),
        "{s}"
    );
}

#[test]
fn the_opencue_script_lists_each_shots_command() {
    let m = manifest();
    let s = opencue::script(&m, Path::new("/opt/drape")).unwrap();
    assert!(s.contains("JOB = \"drape-night\""));
    let cmd = super::emit::sh_line(&task_command(&m.shots[1], Path::new("/opt/drape")).unwrap());
    assert!(s.contains(&format!(
        "    {},\n",
        serde_json::to_string(&("sh020", cmd)).unwrap()
    )));
    assert!(s.contains("outline.modules.shell.Shell("));
    assert_eq!(job_name(&m), "night");
}
