//! Slurm: a job array script, one array task per shot (`#SBATCH --array=0-(n-1)`), with
//! `--requeue` so that a pre-empted or requeued task runs again and continues its shot.
//!
//! A task with `--cpus-per-task` set (on the `sbatch` command line or in the script) bakes
//! with that many threads; otherwise drape uses every processor the task may use. Each
//! task's log is `logs/<job name>_<job id>_<index>.log` beside the script, appended to
//! across requeues. Submit with `sbatch <stem>.sbatch`; limit the shots running at once
//! with `sbatch --array=0-(n-1)%K`.
use super::{case_table, job_name};
use crate::batch::manifest::Manifest;
use crate::error::Result;
use std::path::Path;

/// The job array script of `manifest`, its tasks running `binary`, logs in `logs`.
pub fn script(manifest: &Manifest, binary: &Path, logs: &Path) -> Result<String> {
    let n = manifest.shots.len();
    let name = job_name(manifest);
    let mut s = format!(
        "#!/bin/bash\n\
         #SBATCH --job-name=drape-{name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --requeue\n\
         #SBATCH --open-mode=append\n\
         #SBATCH --output={logs}/%x_%A_%a.log\n\
         # The drape batch {manifest}: one array task per shot, each a `drape simulate`\n\
         # that continues an interrupted bake of its shot (exit codes: 0 done, 2 bad input,\n\
         # 3 simulation failed, 130 interrupted: requeue it).\n\
         #\n\
         # index  shot  output\n",
        last = n - 1,
        logs = logs.display(),
        manifest = manifest.path.display(),
    );
    for (i, shot) in manifest.shots.iter().enumerate() {
        s.push_str(&format!(
            "# {i:>5}  {}  {}\n",
            shot.name,
            shot.out.display()
        ));
    }
    s.push_str(
        "set -u\n\
         threads=()\n\
         if [ -n \"${SLURM_CPUS_PER_TASK:-}\" ]; then\n    \
             threads=(--threads \"$SLURM_CPUS_PER_TASK\")\n\
         fi\n",
    );
    s.push_str(&case_table(
        manifest,
        binary,
        "${SLURM_ARRAY_TASK_ID:?run this script with sbatch}",
        |i, _| i.to_string(),
        " ${threads[@]+\"${threads[@]}\"}",
    )?);
    Ok(s)
}
