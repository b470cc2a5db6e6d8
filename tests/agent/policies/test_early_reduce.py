"""EarlyReduce: a mask reduced before it is combined."""

from cave_tui.agent.policies.early_reduce import reduced_before_combined


def test_a_comparison_reduced_before_it_is_combined_is_found():
    early = "n = (p['species'] == 'Gentoo') & (p['mass'] > 5000).sum()"
    assert reduced_before_combined(early)
    assert not reduced_before_combined(
        "n = ((p['species'] == 'Gentoo') & (p['mass'] > 5000)).sum()"
    )
    assert not reduced_before_combined("n = (p['mass'] > 5000).sum()")
