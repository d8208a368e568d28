//! A mesh of devices with named axes (`{x: 2, y: 4}`), and the mapping between a device's rank and its mesh
//! coordinates.
//!
//! Ranks are row-major: the last axis varies fastest, as in `numpy.arange(n).reshape(shape)`, the device mesh of
//! JAX and Alpa. So in `{x: 2, y: 4}` rank 5 sits at `(x 1, y 1)`, and the devices along `y` with rank 5 are ranks
//! 4..8. Sharding names mesh axes; the collectives it inserts run over the groups of devices that differ only in
//! those axes' coordinates ([`Mesh::group`], [`Mesh::groups`]).

use super::error::MachineError;

/// One named mesh axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    /// The axis name sharding refers to (`x`, `data`, ...).
    pub name: String,
    /// How many devices lie along it (at least 1).
    pub size: usize,
}

/// A mesh: named axes, outermost first. Build it with [`Mesh::new`], which validates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mesh {
    axes: Vec<Axis>,
    devices: usize,
}

impl Mesh {
    /// A mesh from `(name, size)` pairs, outermost first. Errors on an empty or duplicate name, a zero size or a
    /// device count that overflows. A mesh with no axes is one device.
    pub fn new<S: AsRef<str>>(axes: &[(S, usize)]) -> Result<Mesh, MachineError> {
        let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
        let mut devices = 1usize;
        for (name, size) in axes {
            let name = name.as_ref();
            if name.is_empty() {
                return Err(MachineError::EmptyName { what: "mesh axis" });
            }
            if out.iter().any(|a| a.name == name) {
                return Err(MachineError::Duplicate { what: "mesh axis", name: name.to_string() });
            }
            if *size == 0 {
                return Err(MachineError::Zero { what: format!("size of mesh axis '{name}'") });
            }
            devices = devices.checked_mul(*size).ok_or(MachineError::TooManyDevices)?;
            out.push(Axis { name: name.to_string(), size: *size });
        }
        Ok(Mesh { axes: out, devices })
    }

    /// The axes, outermost first.
    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    /// The sizes of the axes, outermost first.
    pub fn shape(&self) -> Vec<usize> {
        self.axes.iter().map(|a| a.size).collect()
    }

    /// The number of devices (the product of the axis sizes).
    pub fn num_devices(&self) -> usize {
        self.devices
    }

    /// The position of axis `name`.
    pub fn axis_index(&self, name: &str) -> Result<usize, MachineError> {
        self.axes.iter().position(|a| a.name == name).ok_or_else(|| MachineError::UnknownAxis(name.to_string()))
    }

    /// The size of axis `name`.
    pub fn axis_size(&self, name: &str) -> Result<usize, MachineError> {
        Ok(self.axes[self.axis_index(name)?].size)
    }

    /// The mesh coordinates of the device with this rank (row-major, last axis fastest).
    pub fn coords(&self, rank: usize) -> Result<Vec<usize>, MachineError> {
        if rank >= self.devices {
            return Err(MachineError::RankOutOfRange { rank, devices: self.devices });
        }
        let mut coords = vec![0; self.axes.len()];
        let mut rest = rank;
        for (c, axis) in coords.iter_mut().zip(&self.axes).rev() {
            *c = rest % axis.size;
            rest /= axis.size;
        }
        Ok(coords)
    }

    /// The rank of the device at these coordinates (one per axis, outermost first).
    pub fn rank(&self, coords: &[usize]) -> Result<usize, MachineError> {
        let fits = coords.len() == self.axes.len() && coords.iter().zip(&self.axes).all(|(c, a)| *c < a.size);
        if !fits {
            return Err(MachineError::BadCoordinates { coords: coords.to_vec(), shape: self.shape() });
        }
        Ok(coords.iter().zip(&self.axes).fold(0, |rank, (c, a)| rank * a.size + c))
    }

    /// The ranks of the devices that share every coordinate of `rank` except those along `axes`: the group a
    /// collective over `axes` runs in. In increasing rank order.
    pub fn group(&self, rank: usize, axes: &[&str]) -> Result<Vec<usize>, MachineError> {
        let mut coords = self.coords(rank)?;
        let along = self.axis_indices(axes)?;
        let mut out = Vec::new();
        self.enumerate(&along, 0, &mut coords, &mut out);
        out.sort_unstable();
        Ok(out)
    }

    /// Every group of a collective over `axes`: the mesh split into groups of devices that differ only along
    /// `axes`. Each group in increasing rank order; groups ordered by their first rank.
    pub fn groups(&self, axes: &[&str]) -> Result<Vec<Vec<usize>>, MachineError> {
        let along = self.axis_indices(axes)?;
        let mut out = Vec::new();
        for rank in 0..self.devices {
            let coords = self.coords(rank)?;
            if along.iter().all(|&i| coords[i] == 0) {
                out.push(self.group(rank, axes)?);
            }
        }
        Ok(out)
    }

    /// The number of devices in a group over `axes` (the product of their sizes).
    pub fn group_size(&self, axes: &[&str]) -> Result<usize, MachineError> {
        Ok(self.axis_indices(axes)?.iter().map(|&i| self.axes[i].size).product())
    }

    fn axis_indices(&self, axes: &[&str]) -> Result<Vec<usize>, MachineError> {
        let mut out: Vec<usize> = Vec::with_capacity(axes.len());
        for name in axes {
            let i = self.axis_index(name)?;
            if out.contains(&i) {
                return Err(MachineError::Duplicate { what: "collective axis", name: name.to_string() });
            }
            out.push(i);
        }
        Ok(out)
    }

    fn enumerate(&self, along: &[usize], k: usize, coords: &mut [usize], out: &mut Vec<usize>) {
        let Some(&axis) = along.get(k) else {
            out.push(coords.iter().zip(&self.axes).fold(0, |rank, (c, a)| rank * a.size + c));
            return;
        };
        for c in 0..self.axes[axis].size {
            coords[axis] = c;
            self.enumerate(along, k + 1, coords, out);
        }
    }
}
