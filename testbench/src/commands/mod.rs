//! The mechanism commands of `smrtl` that belong to one mechanism (the launch calculator, the
//! relssp compiler pass, the static bank-conflict analyzer, batch bank-conflict degrees, the
//! memory kernels' calibration and TB partitions, GPGPU-Sim configurations): each brings its clap command and its run
//! function, and the CLI adds every command of [`commands`] as it is. Adding one is its file in
//! this folder and one line in [`commands`].

pub mod bankan;
pub mod calibrate;
pub mod config;
pub mod conflict;
pub mod launch;
pub mod partition;
pub mod relssp;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::process::ExitCode;

/// A command: its clap definition and how it runs. An error is one line (the CLI prints it
/// after `error: ` and exits 2).
pub struct CommandEntry {
    pub name: &'static str,
    pub command: fn() -> clap::Command,
    pub run: fn(&ArgMatches) -> Result<ExitCode, String>,
}

impl CommandEntry {
    /// The entry of the command whose arguments are `A` (a `clap::Parser` named `name`).
    fn of<A: CommandFactory + FromArgMatches>(
        name: &'static str,
        run: fn(&ArgMatches) -> Result<ExitCode, String>,
    ) -> CommandEntry {
        CommandEntry {
            name,
            command: A::command,
            run,
        }
    }
}

/// Reads `A` from its matches (clap has checked them already).
fn args<A: FromArgMatches>(m: &ArgMatches) -> Result<A, String> {
    A::from_arg_matches(m).map_err(|e| e.to_string().trim().to_string())
}

/// Every mechanism command, in `smrtl --help` order.
pub fn commands() -> Vec<CommandEntry> {
    vec![
        CommandEntry::of::<bankan::BankanArgs>("bankan", |m| bankan::run(args(m)?)),
        CommandEntry::of::<calibrate::CalibrateArgs>("calibrate", |m| calibrate::run(args(m)?)),
        CommandEntry::of::<config::ConfigArgs>("config", |m| config::run(args(m)?)),
        CommandEntry::of::<conflict::ConflictArgs>("conflict", |m| conflict::run(args(m)?)),
        CommandEntry::of::<launch::LaunchArgs>("launch", |m| launch::run(args(m)?)),
        CommandEntry::of::<partition::PartitionArgs>("partition", |m| partition::run(args(m)?)),
        CommandEntry::of::<relssp::RelsspArgs>("relssp", |m| relssp::run(args(m)?)),
    ]
}
