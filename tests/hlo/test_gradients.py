"""Which parameter a backward collective carries the gradient of (hlo/gradients.py): told by the
outputs it reaches sitting at one input leaf's place in their trees, never by shape."""

from __future__ import annotations

from shardwidget.hlo import gradients

INS = ["params['w1']", "params['w2']", "opt[0].mu['w1']", "opt[0].mu['w2']", "batch['x']"]
BACK = "jit(step)/transpose(jvp())/dot_general"


def test_the_parameter_an_update_and_its_optimizer_state_share():
    outs = ["out[1]['w1']", "out[2][0].mu['w1']"]
    assert gradients.gradient_of(BACK, outs, INS) == "params['w1']"
    assert gradients.gradient_of(BACK, ["out[2][0].mu['w2']"], INS) == "params['w2']"
    assert gradients.gradient_of(BACK, ["out['w2']"], INS) == "params['w2']"  # grads returned


def test_not_told_where_outputs_disagree_no_tree_names_it_or_the_op_is_forward():
    assert gradients.gradient_of(BACK, ["out[1]['w1']", "out[1]['w2']"], INS) == ""
    assert gradients.gradient_of(BACK, ["out[0]"], ["w1", "w2"]) == ""  # positional: no place
    assert gradients.gradient_of(BACK, [], INS) == ""  # outputs not told
    assert gradients.gradient_of("jit(step)/dot_general", ["out[1]['w1']"], INS) == ""
    two = ["a['w']", "b['w']"]  # two leaves alike at that place
    assert gradients.gradient_of(BACK, ["out['w']"], two) == ""
