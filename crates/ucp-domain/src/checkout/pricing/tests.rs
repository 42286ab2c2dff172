//! Unit tests of the pricing engine.

use super::*;

#[test]
fn allocation_is_proportional_and_exact() {
    assert_eq!(allocate(100, &[100, 100, 100]), vec![34, 33, 33]);
    assert_eq!(allocate(10, &[1, 1]), vec![1, 1]);
    assert_eq!(allocate(0, &[5, 5]), vec![0, 0]);
    let shares = allocate(999, &[333, 500, 1]);
    assert_eq!(shares.iter().sum::<i64>(), 834);
}
