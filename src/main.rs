//! The `drape` binary: parse flags, run, print an error once, exit with the documented code (docs/reference.md, "Exit codes").
use clap::error::ErrorKind;
use clap::Parser;

/// The binary allocates through [`drape::huge_pages::HugePageAlloc`]: the system allocator,
/// with large arrays in transparent huge pages. The library installs no allocator; a program
/// using it chooses its own.
#[global_allocator]
static ALLOCATOR: drape::huge_pages::HugePageAlloc = drape::huge_pages::HugePageAlloc;

fn main() {
    drape::cli::process::prepare();
    let cli = match drape::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let shown = matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            );
            let args: Vec<String> = std::env::args().collect();
            if !shown && drape::cli::json_requested(&args) {
                // A usage error of a JSON-progress run is a JSON event too (exit 2).
                let text = e.render().to_string();
                let message = text.trim().trim_start_matches("error: ");
                drape::cli::progress::print_error(true, 2, message);
                std::process::exit(2);
            }
            e.exit()
        }
    };
    let json = drape::cli::json_errors(&cli);
    drape::cli::process::on_panic(json);
    if let Err(e) = drape::cli::run(&cli) {
        let code = e.exit_code();
        drape::cli::progress::print_error(json, code, &e.to_string());
        std::process::exit(code);
    }
}
