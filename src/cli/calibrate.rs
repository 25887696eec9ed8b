//! `drape calibrate`: the simulated fabric tests of a material ([`crate::textile`]), or a
//! material fitted to measured figures ([`crate::textile::fit`]).
use super::args::CalibrateArgs;
use crate::error::{Error, Result};
use crate::scene::Material;
use crate::textile::{self, fit};
use std::io::Write;

/// Runs `drape calibrate`. SIGINT/SIGTERM end it within a step, with exit 130.
pub fn run(args: &CalibrateArgs) -> Result<()> {
    super::interrupt::install(false);
    let stop = super::interrupt::stop();
    let spacing = length(&args.spacing, "--spacing")?;
    if !(0.001..=0.05).contains(&spacing) {
        return Err(Error::usage(format!(
            "--spacing {} is outside 1 mm … 5 cm; give the particle spacing of your garments",
            args.spacing
        )));
    }
    let base = Material::from_arg(&args.material)?;
    let stopped = || Error::Interrupted("drape calibrate stopped by a signal".into());
    let Some(bending) = &args.bending_length else {
        let figures = textile::measure(&base, spacing, &stop).map_err(|e| match e {
            Error::Interrupted(_) => stopped(),
            e => e,
        })?;
        let text = if args.json {
            serde_json::to_string_pretty(&figures)
                .map_err(|e| Error::Internal(format!("calibrate JSON: {e}")))?
                + "\n"
        } else {
            format!(
                "material {} at {:.1} cm spacing\n  Cusick drape coefficient  {:.3} ({} nodes)\n  bending length weft (u)   {:.2} cm\n  bending length warp (v)   {:.2} cm\n  tensile slope weft (u)    {:.0} N/m\n  tensile slope warp (v)    {:.0} N/m\n",
                args.material,
                100.0 * spacing,
                figures.drape_coefficient,
                figures.nodes,
                100.0 * figures.bending_length_u,
                100.0 * figures.bending_length_v,
                figures.tensile_u,
                figures.tensile_v
            )
        };
        return super::process::print(&text);
    };
    let density = args.density.unwrap_or(0.0);
    if !(density.is_finite() && density > 0.0 && density < 5.0) {
        return Err(Error::usage(format!(
            "--density {density} is not an areal density in kg/m² (0.12 for 120 g/m²)"
        )));
    }
    let weft = length(bending, "--bending-length")?;
    let warp = match &args.bending_length_warp {
        Some(w) => length(w, "--bending-length-warp")?,
        None => weft,
    };
    for (flag, c) in [("--bending-length", weft), ("--bending-length-warp", warp)] {
        if !(0.003..=0.2).contains(&c) {
            return Err(Error::usage(format!(
                "{flag} {:.2} cm is outside 0.3 … 20 cm; give the cantilever bending length (half the overhang at 41.5°)",
                100.0 * c
            )));
        }
    }
    let drape_coefficient = args
        .drape_coefficient
        .as_deref()
        .map(coefficient)
        .transpose()?;
    let output = args
        .output
        .as_ref()
        .ok_or_else(|| Error::usage("give -o FILE.json for the fitted material"))?;
    if output.exists() && !args.force {
        return Err(Error::usage(format!(
            "{} exists; give --force to replace it, or another -o",
            output.display()
        )));
    }
    let measured = fit::Measured {
        density,
        bending_length_u: weft,
        bending_length_v: warp,
        drape_coefficient,
    };
    let mut report = |line: &str| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    let fitted = fit::fit(&measured, &base, spacing, &stop, &mut report).map_err(|e| match e {
        Error::Interrupted(_) => stopped(),
        e => e,
    })?;
    let text = serde_json::to_string_pretty(&fitted.material)
        .map_err(|e| Error::Internal(format!("material JSON: {e}")))?;
    write_file(output, &format!("{text}\n"))?;
    let summary = serde_json::json!({
        "output": output,
        "bending_length_u": fitted.bending_length[0],
        "bending_length_v": fitted.bending_length[1],
        "drape_coefficient": fitted.drape_coefficient,
    });
    if args.json {
        super::process::print(&format!("{summary}\n"))
    } else {
        let dc = fitted
            .drape_coefficient
            .map(|d| format!(", drape coefficient {d:.3}"))
            .unwrap_or_default();
        super::process::print(&format!(
            "wrote {} (simulated bending lengths {:.2} / {:.2} cm{dc})\n",
            output.display(),
            100.0 * fitted.bending_length[0],
            100.0 * fitted.bending_length[1]
        ))
    }
}

/// A length with an optional unit (`2.1cm`, `21mm`, `0.021m` or `0.021`), in metres.
fn length(text: &str, flag: &str) -> Result<f64> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("mm") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("cm") {
        (n, 1e-2)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * scale),
        _ => Err(Error::usage(format!(
            "{flag} '{text}' is not a length; give e.g. 2.1cm, 21mm or 0.021 (metres)"
        ))),
    }
}

/// A drape coefficient given as a fraction (`0.45`) or a percentage (`45%`).
fn coefficient(text: &str) -> Result<f64> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if (v * scale) > 0.0 && (v * scale) < 1.0 => Ok(v * scale),
        _ => Err(Error::usage(format!(
            "--drape-coefficient '{text}' is not between 0 and 1 (or 0% and 100%)"
        ))),
    }
}

/// Writes `text` to `path` through a temporary file beside it, so that an interrupted
/// write never leaves half a file.
fn write_file(path: &std::path::Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("json.part");
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::input(
            path,
            None,
            format!("cannot write the material file ({e}); choose another -o"),
        )
    })
}
