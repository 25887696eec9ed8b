use super::*;

#[test]
#[ignore]
fn probe_table() {
    let stop = Stop::new();
    let base = Material::preset("silk").unwrap();
    let variants = [
        ("base", base.clone()),
        ("bend/4", base.with_bend_scaled(0.25)),
        ("bend/16", base.with_bend_scaled(1.0 / 16.0)),
        ("shear/10", Material { shear: 2.0, shear_damping: 0.02, ..base.clone() }),
        ("stretch/10", Material { stretch_u: 400.0, stretch_v: 600.0, stretch_damping: 0.6, ..base.clone() }),
    ];
    for (name, m) in variants {
        let t0 = std::time::Instant::now();
        match cusick::drape(&m, 0.01, &stop) {
            Ok(d) => eprintln!("{name:10}: DC {:.3} nodes {} {:.1}s", d.coefficient, d.nodes, t0.elapsed().as_secs_f64()),
            Err(e) => eprintln!("{name:10}: {e}"),
        }
    }
}
