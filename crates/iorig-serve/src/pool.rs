//! The store behind a server: a few threads, each with a [`Store`] of its
//! own, doing the requests' reads and writes. The store's clients are
//! synchronous (the PostgreSQL one drives a runtime of its own, which
//! must not run inside the server's), and a slow query must not hold up
//! the server's other requests.

use iorig_store::{Location, Store, StoreError};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce(&Store) + Send>;

/// Threads that each hold a store and take jobs in turn.
#[derive(Clone)]
pub struct StorePool {
    jobs: mpsc::Sender<Job>,
}

/// Why a job got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    #[error("the result store's threads have stopped")]
    Gone,
}

impl StorePool {
    /// Opens `threads` connections to the store at `at` (each opened here,
    /// so a store that cannot be opened is an error now) and starts a
    /// thread for each. The store is opened for writing (labels are edited
    /// from the pages), which brings an older schema up to date.
    pub fn open(at: &Location, threads: usize) -> Result<StorePool, StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let store = Store::open_at(at)?;
            let rx = Arc::clone(&rx);
            // A thread that cannot start leaves the others to do the work.
            let _ = std::thread::Builder::new()
                .name(format!("iorig-store-{i}"))
                .spawn(move || loop {
                    let job = {
                        let Ok(rx) = rx.lock() else {
                            return;
                        };
                        match rx.recv() {
                            Ok(job) => job,
                            Err(_) => return,
                        }
                    };
                    job(&store);
                });
        }
        Ok(StorePool { jobs: tx })
    }

    /// Runs `f` with a store on one of the threads and gives its answer.
    pub async fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> R + Send + 'static,
    ) -> Result<R, PoolError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move |store: &Store| {
                let _ = tx.send(f(store));
            }))
            .map_err(|_| PoolError::Gone)?;
        rx.await.map_err(|_| PoolError::Gone)
    }
}
