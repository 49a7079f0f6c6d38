//! Hosts: which flows send from one host, and which send to one.
//!
//! A flow group may name the host its flows send from (`host`) and the host they
//! send to (`receiver_host`); a flow that names none is a host of its own, as
//! before hosts could be named. A host is an identity (an address), not a node:
//! CAKE's host isolation hashes it and the `hosts` table sums by it, while the
//! links stay as the topology draws them.

use super::Group;
use std::collections::HashMap;

/// Each flow's hosts as ids: a flow that names no host is the host of its own
/// flow id, so a run without named hosts hashes as it did before; the named
/// hosts take the ids from the number of flows on, in the order the groups
/// first name them.
pub struct Hosts {
    names: Vec<String>,
    flows: u32,
    /// Per group: the ids of the hosts it names, as sender and as receiver.
    named: Vec<(Option<u32>, Option<u32>)>,
}

/// Which end of a flow a host is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Sender,
    Receiver,
}

impl Role {
    pub const fn name(self) -> &'static str {
        match self {
            Role::Sender => "sender",
            Role::Receiver => "receiver",
        }
    }
}

impl Hosts {
    pub fn new(groups: &[Group]) -> Hosts {
        let flows = groups.iter().map(|g| g.first + g.count).max().unwrap_or(0);
        let mut names: Vec<String> = Vec::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut id_of = |name: &Option<String>| -> Option<u32> {
            let name = name.as_ref()?;
            Some(*ids.entry(name.clone()).or_insert_with(|| {
                names.push(name.clone());
                flows + names.len() as u32 - 1
            }))
        };
        let named = groups
            .iter()
            .map(|g| (id_of(&g.host), id_of(&g.receiver_host)))
            .collect();
        Hosts {
            names,
            flows,
            named,
        }
    }

    /// Whether any group names a host in `role`.
    pub fn named_in(&self, role: Role) -> bool {
        self.named.iter().any(|&(s, r)| match role {
            Role::Sender => s.is_some(),
            Role::Receiver => r.is_some(),
        })
    }

    /// The hosts flow `flow` of group `group` sends from and to.
    pub fn ends(&self, group: usize, flow: u32) -> (u32, u32) {
        let (s, r) = self.named[group];
        (s.unwrap_or(flow), r.unwrap_or(flow))
    }

    /// The host of `flow` (of group `group`) in `role`.
    pub fn of(&self, group: usize, flow: u32, role: Role) -> u32 {
        let (s, r) = self.ends(group, flow);
        match role {
            Role::Sender => s,
            Role::Receiver => r,
        }
    }

    /// Host `id`'s name, `id` being the host of a flow of `group`: the name a
    /// group gave it, or `group#i` for the `i`th flow of a group that names
    /// none (`#` is refused in a named host).
    pub fn name(&self, id: u32, group: &Group) -> String {
        if id >= self.flows {
            return self.names[(id - self.flows) as usize].clone();
        }
        format!("{}#{}", group.name, id - group.first)
    }
}
