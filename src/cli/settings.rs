//! Flag values checked and turned into typed settings; every error says which flag and
//! what a valid value looks like.
use crate::error::{Error, Result};
use crate::model::{Rest, UvScale};
use crate::Vec3;

/// Parses `A..B` (inclusive, A ≤ B).
pub fn frame_range(text: &str) -> Result<(i32, i32)> {
    let bad = || {
        Error::usage(format!(
            "--frames '{text}' is not a range like 1..48 (inclusive, start ≤ end)"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let a: i32 = a.trim().parse().map_err(|_| bad())?;
    let b: i32 = b.trim().parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Parses `auto` or a positive number of metres per UV unit.
pub fn uv_scale(text: &str) -> Result<UvScale> {
    if text.eq_ignore_ascii_case("auto") {
        return Ok(UvScale::Auto);
    }
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(UvScale::Fixed(s)),
        _ => Err(Error::usage(format!(
            "--uv-scale '{text}' must be 'auto' or a positive number of metres per UV unit"
        ))),
    }
}

/// Parses `auto`, `uv` or `shape` (`--rest`).
pub fn rest(text: &str) -> Result<Rest> {
    [Rest::Auto, Rest::Uv, Rest::Shape]
        .into_iter()
        .find(|r| text.eq_ignore_ascii_case(r.name()))
        .ok_or_else(|| {
            Error::usage(format!(
                "--rest '{text}' must be 'auto', 'uv' (the UV panels) or 'shape' (the modelled shape)"
            ))
        })
}

/// Parses `X,Y,Z` (m/s).
pub fn vector(flag: &str, text: &str) -> Result<Vec3> {
    let parts: Vec<Option<f64>> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    match parts.as_slice() {
        [Some(x), Some(y), Some(z)] => Ok(Vec3::new(*x, *y, *z)),
        _ => Err(Error::usage(format!(
            "{flag} '{text}' must be three numbers X,Y,Z such as 2,0,0"
        ))),
    }
}

/// Checks a positive finite number flag.
pub fn positive(flag: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::usage(format!(
            "{flag} must be a positive number, got {value}"
        )))
    }
}

impl super::args::InputArgs {
    /// The reading options these flags give, glTF animation sampled at `fps`; a
    /// `--variant` that is not `SET=NAME` is a usage error.
    pub fn read_options(&self, fps: Option<f64>) -> Result<crate::io::ReadOptions> {
        let usd =
            crate::io::usd::compose::Options::from_args(&self.variants).map_err(Error::usage)?;
        Ok(crate::io::ReadOptions {
            fps,
            animation: self.animation.clone(),
            allow_paths: self.allow_paths.clone(),
            usd,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_parse_or_name_the_flag() {
        assert_eq!(frame_range("3..10").unwrap(), (3, 10));
        assert!(frame_range("10..3")
            .unwrap_err()
            .to_string()
            .contains("--frames"));
        assert_eq!(uv_scale("auto").unwrap(), UvScale::Auto);
        assert_eq!(uv_scale("0.5").unwrap(), UvScale::Fixed(0.5));
        assert!(uv_scale("-1").is_err());
        assert_eq!(rest("auto").unwrap(), Rest::Auto);
        assert_eq!(rest("UV").unwrap(), Rest::Uv);
        assert_eq!(rest("shape").unwrap(), Rest::Shape);
        assert!(rest("flat").unwrap_err().to_string().contains("--rest"));
        assert_eq!(
            vector("--wind", "1,-2,3").unwrap(),
            Vec3::new(1.0, -2.0, 3.0)
        );
        assert!(vector("--wind", "1,2")
            .unwrap_err()
            .to_string()
            .contains("--wind"));
        assert!(positive("--fps", 0.0).is_err());
    }
}
