//! What can be wrong with a machine description: every constructor validates its numbers and returns one of these
//! instead of panicking, so a description read from a file or a command line fails with a clear message.

use std::fmt;

/// A machine description that does not make sense.
#[derive(Debug, Clone, PartialEq)]
pub enum MachineError {
    /// A number that must be finite and positive (or non-negative) is not: `what` names it.
    BadNumber {
        /// The quantity, e.g. `"bandwidth of link on axis x"`.
        what: String,
        /// The value given.
        value: f64,
        /// What it must be: `"> 0"` or `">= 0"` (and finite).
        expected: &'static str,
    },
    /// An integer parameter that must be at least 1 is 0.
    Zero {
        /// The parameter, e.g. `"size of axis y"`.
        what: String,
    },
    /// A mesh axis or a memory has an empty name.
    EmptyName {
        /// What kind of thing is unnamed.
        what: &'static str,
    },
    /// Two mesh axes (or two memories, or two throughputs) share a name.
    Duplicate {
        /// What kind of thing is duplicated.
        what: &'static str,
        /// The duplicated name.
        name: String,
    },
    /// A mesh axis name that the mesh does not have.
    UnknownAxis(String),
    /// The mesh has more devices than fit in a `usize`.
    TooManyDevices,
    /// A rank at or beyond the number of devices.
    RankOutOfRange {
        /// The rank given.
        rank: usize,
        /// The number of devices.
        devices: usize,
    },
    /// Coordinates of the wrong length, or one beyond its axis.
    BadCoordinates {
        /// The coordinates given.
        coords: Vec<usize>,
        /// The mesh shape.
        shape: Vec<usize>,
    },
    /// A parameter name the description does not have.
    UnknownParameter {
        /// The name, with the names there are.
        what: String,
    },
    /// An integer parameter above its limit.
    TooLarge {
        /// The parameter.
        what: String,
        /// The value given.
        value: u64,
        /// The limit, as its named constant says.
        max: String,
    },
    /// A machine needs one link per mesh axis.
    LinkCount {
        /// Mesh axes.
        axes: usize,
        /// Links given.
        links: usize,
    },
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineError::BadNumber { what, value, expected } => {
                write!(f, "{what} must be finite and {expected}, not {value}")
            }
            MachineError::Zero { what } => write!(f, "{what} must be at least 1"),
            MachineError::EmptyName { what } => write!(f, "a {what} needs a non-empty name"),
            MachineError::Duplicate { what, name } => write!(f, "{what} '{name}' is given twice"),
            MachineError::UnknownAxis(name) => write!(f, "the mesh has no axis '{name}'"),
            MachineError::TooManyDevices => write!(f, "the mesh has more devices than fit in a usize"),
            MachineError::RankOutOfRange { rank, devices } => {
                write!(f, "rank {rank} is out of range: the mesh has {devices} devices")
            }
            MachineError::BadCoordinates { coords, shape } => {
                write!(f, "coordinates {coords:?} do not lie in a mesh of shape {shape:?}")
            }
            MachineError::UnknownParameter { what } => write!(f, "unknown {what}"),
            MachineError::TooLarge { what, value, max } => write!(f, "{what} is {value}, above {max}"),
            MachineError::LinkCount { axes, links } => {
                write!(f, "a mesh with {axes} axes needs {axes} links (one per axis), not {links}")
            }
        }
    }
}

impl std::error::Error for MachineError {}

/// Checks that `value` is finite and `> 0`.
pub(crate) fn positive(what: impl Into<String>, value: f64) -> Result<f64, MachineError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(MachineError::BadNumber { what: what.into(), value, expected: "> 0" })
    }
}

/// Checks that `value` is finite and `>= 0`.
pub(crate) fn non_negative(what: impl Into<String>, value: f64) -> Result<f64, MachineError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(MachineError::BadNumber { what: what.into(), value, expected: ">= 0" })
    }
}
