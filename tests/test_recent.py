"""_linkmodel._recent.Recent: the engines' bounded memory of recent results."""

from _linkmodel._recent import Recent


def test_keeps_the_most_recently_used_and_forgets_the_oldest():
    made = []
    r = Recent(2)

    def make(k):
        return lambda: made.append(k) or k * 10

    assert r.remember("a", make("a")) == "a" * 10
    assert r.remember("b", make("b")) == "b" * 10
    assert r.remember("a", make("a")) == "a" * 10  # remembered: not made again, now the newest
    assert r.remember("c", make("c")) == "c" * 10  # "b", the least recently used, goes
    assert made == ["a", "b", "c"] and list(r) == ["a", "c"]
    r.remember("b", make("b"))
    assert made == ["a", "b", "c", "b"] and list(r) == ["c", "b"]


def test_an_entry_that_fails_its_check_is_made_again():
    r = Recent(4)
    owner = object()
    r.remember(1, lambda: (owner, "old"))
    other = object()  # the same key (an id reused) for another object
    assert r.remember(1, lambda: (other, "new"), lambda h: h[0] is other) == (other, "new")
    assert r.remember(1, lambda: (other, "newer"), lambda h: h[0] is other) == (other, "new")
    assert len(r) == 1
