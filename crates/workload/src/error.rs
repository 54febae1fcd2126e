//! Diagnostics: every problem of a scenario, each with file, line, column and field.

use std::fmt;

/// One problem in a scenario file.
///
/// Displays as `<file>:<line>:<col>: <field>: <message>`, the form editors and compilers use, e.g.
/// `exp.toml:14:8: task[2].exec (task "R1"): empty range "30ms..28ms": ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as given to [`crate::load`] or [`crate::parse_str`].
    pub file: String,
    /// 1-based line; 0 only when the problem concerns the whole file (it cannot be read).
    pub line: usize,
    /// 1-based column in characters; 0 when `line` is 0.
    pub col: usize,
    /// Where in the scenario: `machine.duration`, `task[2].exec (task "R1")`, ... (task indices
    /// count from 0 in file order); empty for a TOML syntax error or an unreadable file.
    pub field: String,
    /// What is wrong, and what would be right.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.file)?;
        if self.line > 0 {
            write!(f, "{}:{}:", self.line, self.col)?;
        }
        if !self.field.is_empty() {
            write!(f, " {}:", self.field)?;
        }
        write!(f, " {}", self.message)
    }
}

/// Everything wrong with a scenario: never empty, sorted by position in the file.
///
/// Validation does not stop at the first problem, so one run of the tool shows them all.
/// Displays as one [`Diagnostic`] per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl ScenarioError {
    /// A single-problem error; e.g. for a check a tool makes after loading (an unknown policy
    /// name), pointing at a line it got from [`crate::Scenario`].
    pub fn single(
        file: impl Into<String>,
        line: usize,
        col: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            diagnostics: vec![Diagnostic {
                file: file.into(),
                line,
                col,
                field: field.into(),
                message: message.into(),
            }],
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}
