//! [`BoxFuture`], the boxed future the erased traits return: below the context and the cores,
//! which both name it.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future: the one allocation the erased boundary makes per call.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
