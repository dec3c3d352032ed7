//! One rank per device: the node-local rank picks the OpenCL device.

use std::sync::Arc;

use mpi::topology::Communicator;

use femquad::opencl::{Device, DeviceKind, DeviceSelector, list_devices};
use femquad::{Error, Result};

use crate::comm::Ranks;

/// Whether ranks of one node may share a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// One rank per device: more ranks on a node than devices is an error.
    Exclusive,
    /// Ranks beyond the number of devices share them round-robin (e.g.
    /// several ranks on one PoCL CPU device in CI).
    Shared,
}

/// Collective: opens this rank's device among the node's devices of `kind`
/// (in [`list_devices`] order): the node-local rank `l` (its rank among the
/// ranks sharing its node's memory, `MPI_Comm_split_type` shared) gets
/// device `l`, or with [`Sharing::Shared`] device `l mod n_devices`.
///
/// # Errors
/// On every rank ([`Ranks::agree`]): [`Error::InvalidArgument`] naming
/// `kind` if the node has no device of that kind (the devices it has are
/// listed), `sharing` if [`Sharing::Exclusive`] and the node runs more
/// ranks than it has devices of `kind`; device errors of opening it.
pub fn device_for_rank(ranks: &Ranks, kind: DeviceKind, sharing: Sharing) -> Result<Arc<Device>> {
    let node = ranks.comm().split_shared(ranks.rank() as i32);
    let (local, on_node) = (node.rank() as usize, node.size() as usize);
    let device = (|| {
        let all = list_devices()?;
        let of_kind: Vec<_> = all.iter().filter(|d| d.kind == kind).collect();
        if of_kind.is_empty() {
            let listed: Vec<String> = all.iter().map(|d| d.to_string()).collect();
            return Err(Error::arg(
                "kind",
                format!(
                    "this node has no {kind} OpenCL device; it has:\n{}",
                    listed.join("\n")
                ),
            ));
        }
        let n = of_kind.len();
        if sharing == Sharing::Exclusive && on_node > n {
            return Err(Error::arg(
                "sharing",
                format!(
                    "{on_node} ranks run on this node but it has {n} {kind} device(s), and \
                     Sharing::Exclusive gives each rank its own: start at most {n} ranks \
                     per node, or pass Sharing::Shared to let ranks share devices"
                ),
            ));
        }
        Device::open(&DeviceSelector::Index(of_kind[local % n].index))
    })();
    ranks.agree(device)
}
