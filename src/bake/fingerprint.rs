//! The scene part of a checkpoint's fingerprint ([`super::Fingerprint`]): one 64-bit
//! digest of everything read from the input files that a bake depends on, so that a
//! checkpoint is continued only by a bake of the same scene.
//!
//! Every number of the scene goes in as its bits, in a fixed order, field by field
//! (each type's fields are destructured, so a field added to a scene type does not
//! compile until it is digested here): garments (name, source, positions, triangles,
//! corner UVs, pins, output points, world transform, own animation, keyframes, keyframe
//! weights, output faces), bodies (name, source, triangles, animation samples, thickness,
//! friction), the up axis, fps and frame range of the files, then the scene file's
//! settings. A list goes in as its length then its items, an `Option` as 0 or 1 then the
//! value, text as its length then its bytes eight to a word.
//!
//! The digest takes one 64-bit word at a time through MurmurHash3's x64 mixing (Austin
//! Appleby's public-domain hash, the block step of its `h1` lane), then its finaliser:
//!
//! ```text
//! k = rotl(w · c1, 31) · c2          (c1, c2: MurmurHash3's x64 constants)
//! h = rotl(h ⊕ k, 27) · 5 + 0x52dce729
//! digest = fmix64(h ⊕ words)
//! ```
//! Each step is a bijection of the word for a given `h`, so changing any one number of
//! the scene changes the state after it. It tells scenes apart; it resists no forgery.
use crate::io::scene_file::{GarmentSettings, KeyframesEntry};
use crate::io::Selected;
use crate::scene::{Animation, Body, Garment, OutputFaces, Scene, UpAxis};
use crate::{Mat3, Vec2, Vec3};
use std::path::{Path, PathBuf};

/// The digest of `selected` (module doc).
pub fn scene_digest(selected: &Selected) -> u64 {
    let mut d = Digest::default();
    selected.feed(&mut d);
    d.value()
}

/// A digest of 64-bit words (module doc).
#[derive(Debug, Default)]
struct Digest {
    h: u64,
    words: u64,
}

impl Digest {
    /// Adds one word.
    #[inline]
    fn word(&mut self, w: u64) {
        const C1: u64 = 0x87c3_7b91_1142_53d5;
        const C2: u64 = 0x4cf5_ad43_2745_937f;
        let k = w.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        self.h = (self.h ^ k)
            .rotate_left(27)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        self.words += 1;
    }

    /// The digest of the words so far: MurmurHash3's `fmix64` of the state and count.
    fn value(&self) -> u64 {
        let mut k = self.h ^ self.words;
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^ (k >> 33)
    }
}

/// A value that goes into the digest.
trait Feed {
    /// Adds the value's words.
    fn feed(&self, d: &mut Digest);
}

impl Feed for f64 {
    #[inline]
    fn feed(&self, d: &mut Digest) {
        d.word(self.to_bits());
    }
}

impl Feed for usize {
    #[inline]
    fn feed(&self, d: &mut Digest) {
        d.word(*self as u64);
    }
}

impl Feed for i32 {
    fn feed(&self, d: &mut Digest) {
        d.word(i64::from(*self) as u64);
    }
}

impl Feed for u32 {
    fn feed(&self, d: &mut Digest) {
        d.word(u64::from(*self));
    }
}

impl Feed for Vec3 {
    #[inline]
    fn feed(&self, d: &mut Digest) {
        self.iter().for_each(|c| c.feed(d));
    }
}

impl Feed for Vec2 {
    #[inline]
    fn feed(&self, d: &mut Digest) {
        self.iter().for_each(|c| c.feed(d));
    }
}

impl Feed for Mat3 {
    fn feed(&self, d: &mut Digest) {
        self.iter().for_each(|c| c.feed(d));
    }
}

impl<T: Feed, const N: usize> Feed for [T; N] {
    #[inline]
    fn feed(&self, d: &mut Digest) {
        self.iter().for_each(|x| x.feed(d));
    }
}

impl<T: Feed> Feed for [T] {
    fn feed(&self, d: &mut Digest) {
        self.len().feed(d);
        self.iter().for_each(|x| x.feed(d));
    }
}

impl<T: Feed> Feed for Vec<T> {
    fn feed(&self, d: &mut Digest) {
        self.as_slice().feed(d);
    }
}

impl<T: Feed> Feed for Option<T> {
    fn feed(&self, d: &mut Digest) {
        match self {
            None => d.word(0),
            Some(x) => {
                d.word(1);
                x.feed(d);
            }
        }
    }
}

impl<A: Feed, B: Feed> Feed for (A, B) {
    fn feed(&self, d: &mut Digest) {
        self.0.feed(d);
        self.1.feed(d);
    }
}

impl Feed for [u8] {
    fn feed(&self, d: &mut Digest) {
        self.len().feed(d);
        for chunk in self.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            d.word(u64::from_le_bytes(w));
        }
    }
}

impl Feed for String {
    fn feed(&self, d: &mut Digest) {
        self.as_bytes().feed(d);
    }
}

impl Feed for Path {
    fn feed(&self, d: &mut Digest) {
        self.as_os_str().as_encoded_bytes().feed(d);
    }
}

impl Feed for PathBuf {
    fn feed(&self, d: &mut Digest) {
        self.as_path().feed(d);
    }
}

impl Feed for UpAxis {
    fn feed(&self, d: &mut Digest) {
        d.word(match self {
            UpAxis::Y => 0,
            UpAxis::Z => 1,
        });
    }
}

impl Feed for Animation {
    fn feed(&self, d: &mut Digest) {
        let Animation { frames, positions } = self;
        frames.feed(d);
        positions.feed(d);
    }
}

impl Feed for OutputFaces {
    fn feed(&self, d: &mut Digest) {
        let OutputFaces {
            counts,
            points,
            uvs,
        } = self;
        counts.feed(d);
        points.feed(d);
        uvs.feed(d);
    }
}

impl Feed for Garment {
    fn feed(&self, d: &mut Digest) {
        let Garment {
            name,
            source,
            positions,
            triangles,
            corner_uvs,
            pin,
            output_points,
            world_linear,
            world_translation,
            animation,
            keyframes,
            key_weight,
            output_faces,
        } = self;
        name.feed(d);
        source.feed(d);
        positions.feed(d);
        triangles.feed(d);
        corner_uvs.feed(d);
        pin.feed(d);
        output_points.feed(d);
        world_linear.feed(d);
        world_translation.feed(d);
        animation.feed(d);
        keyframes.feed(d);
        key_weight.feed(d);
        output_faces.feed(d);
    }
}

impl Feed for Body {
    fn feed(&self, d: &mut Digest) {
        let Body {
            name,
            source,
            triangles,
            animation,
            thickness,
            friction,
        } = self;
        name.feed(d);
        source.feed(d);
        triangles.feed(d);
        animation.feed(d);
        thickness.feed(d);
        friction.feed(d);
    }
}

impl Feed for Scene {
    fn feed(&self, d: &mut Digest) {
        let Scene {
            garments,
            bodies,
            up,
            fps,
            frame_range,
        } = self;
        garments.feed(d);
        bodies.feed(d);
        up.feed(d);
        fps.feed(d);
        frame_range.feed(d);
    }
}

impl Feed for GarmentSettings {
    fn feed(&self, d: &mut Digest) {
        let GarmentSettings { material, out } = self;
        material.feed(d);
        out.feed(d);
    }
}

impl Feed for KeyframesEntry {
    fn feed(&self, d: &mut Digest) {
        let KeyframesEntry {
            source,
            regularization,
            iterations,
        } = self;
        source.feed(d);
        regularization.feed(d);
        iterations.feed(d);
    }
}

impl Feed for Selected {
    fn feed(&self, d: &mut Digest) {
        let Selected {
            scene,
            garment_settings,
            max_step,
            keyframes,
        } = self;
        scene.feed(d);
        garment_settings.feed(d);
        max_step.feed(d);
        keyframes.feed(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skirt() -> Selected {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/skirt_on_character.gltf");
        crate::io::select(&path, &[], &[], Some(24.0)).unwrap()
    }

    #[test]
    fn two_reads_of_one_file_have_one_digest() {
        assert_eq!(scene_digest(&skirt()), scene_digest(&skirt()));
    }

    #[test]
    fn one_body_point_or_one_garment_uv_changes_the_digest() {
        let base = skirt();
        let digest = scene_digest(&base);
        let next = |x: f64| f64::from_bits(x.to_bits() + 1);

        let mut s = base.clone();
        let body = &mut s.scene.bodies[0].animation.positions;
        let (k, i) = (body.len() - 1, body[0].len() / 2);
        body[k][i].y = next(body[k][i].y);
        assert_ne!(scene_digest(&s), digest, "a body point one ulp higher");

        let mut s = base.clone();
        let uv = &mut s.scene.garments[0].corner_uvs[7][1];
        uv.x = next(uv.x);
        assert_ne!(scene_digest(&s), digest, "a garment UV one ulp off");

        let mut s = base.clone();
        s.scene.garments[0].triangles.swap(0, 1);
        assert_ne!(scene_digest(&s), digest, "two triangles swapped");

        let mut s = base;
        s.max_step = Some(0.01);
        assert_ne!(scene_digest(&s), digest, "a scene-file setting");
    }

    #[test]
    fn a_list_split_differently_digests_differently() {
        let a: Vec<Vec<f64>> = vec![vec![1.0, 2.0], vec![3.0]];
        let b: Vec<Vec<f64>> = vec![vec![1.0], vec![2.0, 3.0]];
        let digest = |v: &Vec<Vec<f64>>| {
            let mut d = Digest::default();
            v.feed(&mut d);
            d.value()
        };
        assert_ne!(digest(&a), digest(&b));
    }
}
