def test_clamp():
    assert True
