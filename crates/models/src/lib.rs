//! # models: the analytical models of the seed papers
//!
//! Closed forms and exact Markov-chain solutions that the papers derive, so a
//! simulation can be checked against theory. The models know nothing of packets,
//! qdiscs or the engine; the *queue lab* beside them drives the real qdiscs of `aqm`
//! with Poisson arrivals, to compare those with the models (`aqmlab queue-lab`, and
//! the Python package through its extension).
//!
//! ## Map
//! - [`sfb`]: [`sfb_misclassification`], the probability that SFB misclassifies a
//!   responsive flow (SFB paper, INFOCOM 2001, section IV-B, eq. (1), Fig. 4).
//! - [`choke_front`]: [`front_choke`], front CHOKe with Poisson arrivals and
//!   exponential service: p_i = lambda_i / (mu + 2 lambda_i), throughputs and P0
//!   (CHOKe paper, INFOCOM 2000, section IV-A, eqs. (1)-(2), Table II).
//! - [`choke_back`]: [`back_choke`], back CHOKe with a memory of the last M admitted
//!   flow ids: the exact stationary distribution of the Markov chain over ordered
//!   M-tuples (section IV-B, eqs. (4)-(5), Table III), and the product form that
//!   generalises eq. (5) to any M.
//! - [`linalg`]: the stationary-distribution solvers (dense Gaussian elimination
//!   with partial pivoting; sparse power iteration on the lazy chain).
//! - [`error`]: [`ModelError`], naming the bad argument.
//! - [`queue_lab`]: [`run_lab`], N Poisson sources into one exponential server
//!   through a real qdisc of `aqm` (or the back-CHOKe model as a qdisc).
//! - [`mloc`]: [`mloc::Mloc`], the back-CHOKe model's queue as a qdisc for the lab.
//! - [`report`]: the models as `aqmlab model ...` prints them (text or JSON).
//!
//! ## Example
//! ```
//! let p = models::sfb_misclassification(2, 23, 4).unwrap();
//! assert_eq!((p * 400.0).round(), 11.0); // "11 of the 400 TCP flows" (SFB paper, IV-B)
//! let front = models::front_choke(1.0, &[0.5, 1.0]).unwrap();
//! assert!((front.p0 - 0.417).abs() < 5e-4); // Table II, first row
//! let back = models::back_choke(1, &[1.0, 1.0, 1.0, 7.0]).unwrap();
//! assert!((back.flows[3].share - 0.4375).abs() < 1e-12); // Table III, second row
//! ```
#![deny(unsafe_code)]

pub mod choke_back;
pub mod choke_front;
pub mod error;
pub mod linalg;
pub mod mloc;
pub mod queue_lab;
pub mod report;
pub mod sfb;

pub use choke_back::{back_choke, back_choke_product_form, BackChoke, BackFlow, Solver};
pub use choke_front::{front_choke, FrontChoke, FrontFlow};
pub use error::ModelError;
pub use queue_lab::{run_lab, LabCandidate, LabConfig, LabQdisc, LabResult};
pub use sfb::sfb_misclassification;
