use runlength::encode;

#[test]
fn single_runs() {
    assert_eq!(encode("abc"), "a1b1c1");
}

#[test]
fn long_runs() {
    assert_eq!(encode("aaab"), "a3b1");
}

#[test]
fn empty() {
    assert_eq!(encode(""), "");
}
