//! `docs/cli.md`, generated from the clap definitions: the long help of `gapbench` and of
//! each of its commands, exactly as `gapbench COMMAND --help` prints it. A test in
//! `main.rs` fails when the committed file differs (`UPDATE_DOCS=1` rewrites it), so the
//! reference cannot drift from the flags.

use std::fmt::Write as _;

/// Help is laid out for this many columns whatever the terminal, so the file is the same on
/// every machine.
const WIDTH_COLUMNS: usize = 100;

/// The whole of `docs/cli.md` for the command tree `cli` (the binary's `Cli::command()`).
pub fn markdown(cli: clap::Command) -> String {
    let mut cli = cli.term_width(WIDTH_COLUMNS);
    cli.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         Generated from the clap definitions (`crates/harness/src/main.rs` and \
         `crates/harness/src/cli/`): do not edit by hand; \
         `UPDATE_DOCS=1 cargo test --release -p gapbench --bin gapbench cli_reference` \
         rewrites it. Each section is what `gapbench COMMAND --help` prints. \
         `cargo xtask COMMAND ARGS` runs `gapbench COMMAND ARGS` after checking the build's \
         prerequisites; the binary itself is `target/release/gapbench`.\n",
    );
    let mut commands = vec![("gapbench".to_string(), cli.clone())];
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        commands.push((format!("gapbench {}", sub.get_name()), sub.clone()));
    }
    out.push('\n');
    for (name, _) in &commands[1..] {
        let anchor = name.replace(' ', "-");
        writeln!(out, "- [`{name}`](#{anchor})").expect("to a String");
    }
    for (name, mut command) in commands {
        let help = command.render_long_help().to_string();
        write!(out, "\n## {name}\n\n```text\n").expect("to a String");
        for line in help.trim_end().lines() {
            writeln!(out, "{}", line.trim_end()).expect("to a String");
        }
        out.push_str("```\n");
    }
    out
}
