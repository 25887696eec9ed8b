//! Checkpoints and resume (docs/reference.md, "Checkpoints"): a bake that is killed or
//! pre-empted continues where it was, and its caches come out byte for byte as if it had
//! never stopped.
//!
//! One checkpoint per bake, `<out>.checkpoint` beside the first garment's cache, holds
//! every garment's simulator state ([`Simulator::save_state`]) at one frame boundary, so
//! the garments of a bake always resume together. It is written every `N` frames
//! (`--checkpoint-every N`; by default whenever the frames since the last one took 50
//! times as long as writing it, which keeps its cost under 2% of the bake), and when a
//! stop request ends the bake at a frame boundary; the partial caches are flushed to the
//! disk first, then the checkpoint goes to `<out>.checkpoint.tmp`, is flushed and renamed
//! over the old one, so a checkpoint on disk is always whole and its frames are in the
//! caches. A finished bake removes it.
//!
//! ```text
//! "DRAPECKP"  u32 version
//! build       `drape --version` of the binary that wrote it
//! scene       u64 digest of the scene as read (garments, bodies, animation, settings;
//!             every number's bits in a fixed order, `fingerprint.rs`)
//! options     (flag, value) of every option that changes the result
//! frames      i32 first, i32 last, u64 frames written
//! garments    per garment: name, u64 length, its simulator state
//! u64         FNV-1a of every byte before it
//! ```
//! `--resume` reads it, refuses it (exit 2) if the build, the scene or an option differs
//! (naming which), takes over each partial cache cut back to the checkpoint's frames
//! ([`cache::reopen`]) and restores the simulators. Without a checkpoint it starts from
//! the first frame, replacing an earlier partial cache, and says so.
use super::Bake;
use crate::cache::{self, CacheMeta, CacheWriter};
use crate::error::{Error, Result};
use crate::format::binary::{Damaged, Fnv, Reader, Writer};
use crate::io::Selected;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The first bytes of a checkpoint.
const MAGIC: &[u8; 8] = b"DRAPECKP";
/// The layout version this build writes and reads.
const VERSION: u32 = 1;
/// By default a checkpoint is written once the frames since the last one took this many
/// times as long as writing it: its cost stays under 1/50 = 2% of the bake.
pub const AUTO_RATIO: f64 = 50.0;

/// What a checkpoint must match to be continued: the build, the scene, the options.
#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    /// `drape --version` of the build.
    pub build: String,
    /// Digest of the scene as read ([`Selected`] in full, `fingerprint.rs`).
    pub scene: u64,
    /// `(flag, value)` of every option that changes the result.
    pub options: Vec<(String, String)>,
}

impl Fingerprint {
    /// The fingerprint of a bake of `selected` with `options`, by this build.
    pub fn new(selected: &Selected, options: Vec<(String, String)>) -> Self {
        Fingerprint {
            build: build().to_string(),
            scene: super::fingerprint::scene_digest(selected),
            options,
        }
    }

    /// Why a checkpoint of fingerprint `saved` does not fit this bake, if it does not.
    fn mismatch(&self, saved: &Fingerprint) -> Option<String> {
        if saved.build != self.build {
            return Some(format!(
                "was written by {}, this is {}; finish the bake with that build, or start it \
                 again with --force",
                saved.build, self.build
            ));
        }
        if saved.scene != self.scene {
            return Some(
                "was written for another scene (its garments, bodies, animation or scene-file \
                 settings differ); resume with the scene as it was, or start again with --force"
                    .into(),
            );
        }
        for (flag, value) in &self.options {
            let old = saved.options.iter().find(|(f, _)| f == flag);
            if old.is_none_or(|(_, v)| v != value) {
                let was = old.map_or("not given", |(_, v)| v.as_str());
                let shown = |v: &str| if v.len() > 60 { "another value" } else { v }.to_string();
                return Some(format!(
                    "was written with {flag} {}, this run gives {flag} {}; resume with the \
                     options of the interrupted bake, or start again with --force",
                    shown(was),
                    shown(value)
                ));
            }
        }
        None
    }
}

/// `drape --version`'s text: version and commit.
pub fn build() -> &'static str {
    concat!(
        "drape ",
        env!("CARGO_PKG_VERSION"),
        " (",
        env!("DRAPE_COMMIT"),
        ")"
    )
}

/// `<out>.checkpoint`.
pub fn checkpoint_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".checkpoint");
    PathBuf::from(s)
}

/// When checkpoints are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    /// After every `N` simulated frames (`--checkpoint-every N`; 0: never).
    Frames(usize),
    /// Whenever the frames since the last one took [`AUTO_RATIO`] times as long as
    /// writing it (the first after the first simulated frame).
    Auto,
}

/// A bake's checkpoints: where, how often, and what they must match.
#[derive(Debug)]
pub(super) struct Checkpoints {
    path: PathBuf,
    every: Every,
    fingerprint: Fingerprint,
    /// Seconds of frames since the last checkpoint, and what writing it took.
    since: f64,
    cost: Option<f64>,
    /// A write failed (warned about once).
    failed: bool,
}

impl Checkpoints {
    /// Checkpoints at `path`, written as `every` says, matching `fingerprint`.
    pub(super) fn new(path: PathBuf, every: Every, fingerprint: Fingerprint) -> Self {
        Checkpoints {
            path,
            every,
            fingerprint,
            since: 0.0,
            cost: None,
            failed: false,
        }
    }

    /// Whether a checkpoint is due after a frame of `seconds` that made `simulated`
    /// frames since the first.
    pub(super) fn due(&mut self, simulated: usize, seconds: f64) -> bool {
        self.since += seconds;
        match self.every {
            Every::Frames(0) => false,
            Every::Frames(n) => simulated.is_multiple_of(n),
            Every::Auto => self.cost.is_none_or(|c| self.since >= AUTO_RATIO * c),
        }
    }
}

/// A checkpoint read back.
struct Saved {
    fingerprint: Fingerprint,
    frames: (i32, i32),
    done: usize,
    /// `(garment, state bytes)`.
    garments: Vec<(String, Vec<u8>)>,
}

impl<'a> Bake<'a> {
    /// Writes a checkpoint of the current frame boundary if one is due after a frame of
    /// `seconds` (`force`: whatever the interval); a failure is a warning, once, and the
    /// bake goes on.
    pub(super) fn checkpoint(&mut self, seconds: f64, force: bool) -> Option<String> {
        let simulated = self.done.saturating_sub(1);
        let c = self.checkpoints.as_mut()?;
        let wanted = c.due(simulated, seconds) || (force && c.every != Every::Frames(0));
        if !wanted {
            return None;
        }
        let started = Instant::now();
        let written = self.write_checkpoint();
        let c = self.checkpoints.as_mut()?;
        c.since = 0.0;
        c.cost = Some(started.elapsed().as_secs_f64());
        match written {
            Ok(()) => None,
            Err(e) if !c.failed => {
                c.failed = true;
                Some(format!(
                    "could not write the checkpoint {} ({e}); the bake goes on, but a resume \
                     would start from an earlier frame",
                    c.path.display()
                ))
            }
            Err(_) => None,
        }
    }

    /// Flushes the caches, then writes the checkpoint atomically (module doc).
    fn write_checkpoint(&mut self) -> std::io::Result<()> {
        let Some(c) = &self.checkpoints else {
            return Ok(());
        };
        for t in &mut self.tracks {
            if let Some(w) = t.cache.as_mut().and_then(|c| c.writer.as_mut()) {
                w.sync().map_err(std::io::Error::other)?;
            }
        }
        let mut w = Writer::new();
        w.bytes(MAGIC);
        w.put(&VERSION);
        let f = &c.fingerprint;
        w.put(&f.build.to_string());
        w.put(&f.scene);
        w.put(&f.options);
        w.put(&self.frames);
        w.put(&self.done);
        w.put(&self.tracks.len());
        for t in &self.tracks {
            let mut state = Writer::new();
            t.sim.save_state(&mut state);
            let state = state.into_bytes();
            w.put(&t.garment.name);
            w.put(&state.len());
            w.bytes(&state);
        }
        let mut bytes = w.into_bytes();
        let mut h = Fnv::default();
        h.update(&bytes);
        bytes.extend_from_slice(&h.value().to_le_bytes());
        let mut tmp = c.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        let result = (|| {
            let mut file = crate::cache::claim::create_new(&tmp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &c.path)?;
            // The rename itself reaches the disk with its directory.
            let dir = c.path.parent().filter(|d| !d.as_os_str().is_empty());
            if let Ok(d) = std::fs::File::open(dir.unwrap_or(Path::new("."))) {
                let _ = d.sync_all();
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Removes the checkpoint (the bake finished, or a new one starts).
    pub(super) fn remove_checkpoint(&self) {
        if let Some(c) = &self.checkpoints {
            let _ = std::fs::remove_file(&c.path);
        }
    }

    /// `--resume`: continues from the checkpoint if there is one (module doc); warnings
    /// say from where, or that the bake starts from the first frame and why.
    pub(super) fn resume(&mut self) -> Result<()> {
        let Some(c) = &self.checkpoints else {
            return Ok(());
        };
        let path = c.path.clone();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.force_partial = true;
                self.warnings.push(format!(
                    "--resume: no checkpoint {}; starting from the first frame",
                    path.display()
                ));
                return Ok(());
            }
            Err(e) => return Err(Error::input(&path, None, format!("cannot be read: {e}"))),
        };
        let damaged = || {
            Error::input(
                &path,
                None,
                "is damaged or not a drape checkpoint; delete it to start the bake again \
                 (with --force over its partial caches)",
            )
        };
        let saved = read(&bytes).map_err(|_| damaged())?;
        let c = self.checkpoints.as_ref().ok_or_else(damaged)?;
        if let Some(why) = c.fingerprint.mismatch(&saved.fingerprint) {
            return Err(Error::input(&path, None, why));
        }
        let names: Vec<&str> = self
            .tracks
            .iter()
            .map(|t| t.garment.name.as_str())
            .collect();
        let saved_names: Vec<&str> = saved.garments.iter().map(|(n, _)| n.as_str()).collect();
        if saved.frames != self.frames
            || names != saved_names
            || saved.done == 0
            || saved.done > self.total()
        {
            return Err(damaged());
        }
        if let Err(e) = self.reopen_caches(saved.done) {
            for t in &mut self.tracks {
                if let Some(c) = t.cache.as_mut() {
                    c.writer = None;
                }
            }
            self.force_partial = true;
            self.warnings
                .push(format!("--resume: {e}; starting from the first frame"));
            return Ok(());
        }
        for (t, (_, state)) in self.tracks.iter_mut().zip(&saved.garments) {
            let mut r = Reader::new(state);
            t.sim.restore_state(&mut r).map_err(|_| damaged())?;
            if r.remaining() != 0 {
                return Err(damaged());
            }
        }
        self.done = saved.done;
        self.warnings.push(format!(
            "--resume: continuing after frame {} from the checkpoint {}",
            self.frames.0 + saved.done as i32 - 1,
            path.display()
        ));
        Ok(())
    }

    /// Takes over every partial cache at `frames` frames.
    fn reopen_caches(&mut self, frames: usize) -> Result<()> {
        let (first, total, fps, up) = (self.frames.0, self.total(), self.fps, self.cache_up);
        for t in &mut self.tracks {
            if let Some(c) = t.cache.as_mut() {
                let mut meta = CacheMeta::for_garment(t.garment, first, total, fps, up);
                meta.replace_partial = self.force;
                let w: Box<dyn CacheWriter> = cache::reopen(&c.path, &meta, frames)?;
                c.writer = Some(w);
            }
        }
        Ok(())
    }
}

/// Parses a checkpoint's bytes (module doc).
fn read(bytes: &[u8]) -> std::result::Result<Saved, Damaged> {
    let body = bytes.len().checked_sub(8).ok_or(Damaged)?;
    let mut h = Fnv::default();
    h.update(&bytes[..body]);
    if bytes[body..] != h.value().to_le_bytes() {
        return Err(Damaged);
    }
    let mut r = Reader::new(&bytes[..body]);
    if r.bytes(MAGIC.len())? != MAGIC || r.get::<u32>()? != VERSION {
        return Err(Damaged);
    }
    let fingerprint = Fingerprint {
        build: r.get()?,
        scene: r.get()?,
        options: r.get()?,
    };
    let frames = r.get()?;
    let done = r.get()?;
    let n: usize = r.get()?;
    let mut garments = Vec::new();
    for _ in 0..n {
        let name = r.get()?;
        let len: usize = r.get()?;
        garments.push((name, r.bytes(len)?.to_vec()));
    }
    Ok(Saved {
        fingerprint,
        frames,
        done,
        garments,
    })
}
