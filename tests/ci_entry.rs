//! `.ci/run` runs exactly the README's "Run every test" command, from the repository root:
//! CI and a developer following the README run the same tests.
use std::path::Path;

/// The lines of the fenced `sh` block that follows the README paragraph starting with
/// `heading` in the "Two commands" section.
fn readme_block(readme: &str, heading: &str) -> Vec<String> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Two commands"))
        .expect("README.md has a \"Two commands\" section");
    let after = section
        .split_once(heading)
        .unwrap_or_else(|| panic!("no paragraph \"{heading}\" in \"Two commands\""))
        .1;
    let block = after
        .split_once("```sh\n")
        .expect("a ```sh block after the paragraph")
        .1
        .split_once("```")
        .expect("the block is closed")
        .0;
    block.lines().map(str::to_owned).collect()
}

#[test]
fn ci_runs_the_readme_test_command_from_the_repository_root() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = readme_block(&readme, "Run every test");
    assert_eq!(command, ["./scripts/test.sh"], "the README's test command");

    let run = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(run.starts_with("#!/usr/bin/env bash\n"), "{run}");
    // Besides comments, `.ci/run` only stops on the first error, goes to the repository
    // root (its parent directory) and runs the README's command, line for line.
    let lines: Vec<&str> = run
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    let mut expected = vec!["set -euo pipefail", "cd \"$(dirname \"$0\")/..\""];
    expected.extend(command.iter().map(String::as_str));
    assert_eq!(lines, expected);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [".ci/run", "scripts/test.sh"] {
            let mode = std::fs::metadata(root.join(file))
                .unwrap()
                .permissions()
                .mode();
            assert!(mode & 0o111 != 0, "{file} is not executable ({mode:o})");
        }
    }
}
