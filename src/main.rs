//! The `drape` binary: parse flags, run, print an error once, exit with SPEC's code.
use clap::Parser;

fn main() {
    let cli = drape::cli::Cli::parse();
    let json = drape::cli::json_errors(&cli);
    if let Err(e) = drape::cli::run(&cli) {
        let code = e.exit_code();
        drape::cli::progress::print_error(json, code, &e.to_string());
        std::process::exit(code);
    }
}
