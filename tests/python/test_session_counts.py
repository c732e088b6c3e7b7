"""zoo_compile.session's training step and dynamo counts, on small models built here.

The step is upstream's forward_and_backward_pass (gradients cleared, forward, loss, backward,
the optimizer's step), compared with the same step written out by hand; its warm-up leaves the
model as it was. Where torch.compile runs (torch >= 2: the GPU machine), the counts zoobench
reports (session.facts(), upstream's get_dynamo_stats formulas) are dynamo's own counters, on a
model with known graph breaks, and a compiled training step breaks where upstream's does: at the
gradients' clearing, at backward() and around SGD's step, which both leave to eager."""

import contextlib
import copy
import sys
import unittest

import torch
from torch import nn

import helpers  # noqa: F401  (tools/ on sys.path)
from zoo_compile import frame_watch
from zoo_compile import session as session_module
from zoo_compile.environment import torch_compile_missing

from test_training_step import SmallConvNet  # a conv / batch-norm / linear model on 8x8 images

CAN_COMPILE = torch_compile_missing(torch) is None


def _has_transformers() -> bool:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


class Breaking(nn.Module):
    """Three explicit graph breaks in the forward: four graphs."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        # Written out: dynamo skips a whole frame whose loop breaks the graph.
        x = torch.relu(self.a(x))
        torch._dynamo.graph_break()
        x = self.b(x) * 0.5
        torch._dynamo.graph_break()
        x = self.b(x) * 0.5
        torch._dynamo.graph_break()
        return self.b(x) * 0.5


class OneOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        return self.a(x)


class TwoOutputs(OneOutput):
    """A tuple of outputs: the training loss looks at each before it reduces them."""

    def forward(self, x):
        y = self.a(x)
        return y, {"scaled": y * 0.5}


class KeywordOutputsBreaking(OneOutput):
    """Keyword input, a mapping of outputs, a graph break in between (as transformers'
    models have: logging calls, torch._dynamo.graph_break())."""

    def forward(self, x):
        y = self.a(x)
        torch._dynamo.graph_break()
        return {"logits": y, "scaled": y * 0.5}


class MaskedLMOutput(dict):
    """Stands in for transformers' output of that name (a mapping with attributes), which
    upstream's reduce_to_scalar_loss reduces to its logits alone."""

    def __getattr__(self, name):
        return self[name]


class KeywordMaskedLM(OneOutput):
    """A masked LM's calling convention: input_ids and labels by name, its own loss and the
    logits out, as transformers' models (which of its inputs came by name is kept)."""

    def __init__(self, output_type=MaskedLMOutput):
        super().__init__()
        self.output_type = output_type
        self.called_with = None

    def forward(self, input_ids=None, labels=None):
        self.called_with = sorted(k for k, v in (("input_ids", input_ids), ("labels", labels))
                                  if v is not None)
        logits = self.a(input_ids)
        return self.output_type(loss=((logits - labels) ** 2).mean(), logits=logits)


def session_for(module, training, optimizer="sgd", compile_settings=None):
    """A ModelSession around `module` as open_session builds one, without a zoo entry."""
    s = object.__new__(session_module.ModelSession)
    s.device, s.training, s.dtype, s.amp = "cpu", training, torch.float32, False
    s.loss_scale, s.loss_rule = 1.0, "mean_of_floating_outputs"
    s.compile_settings, s._cache, s._compiled = compile_settings, None, None
    s.module = module.train(training)
    s._keyword_model, s._input_names = session_module._keyword_call_of(s.module, s.loss_rule)
    s._upstream_loss = s._upstream_loss_of_rule()
    s._optimizer_settings = {"kind": optimizer, "learning_rate": 0.01}
    s.optimizer = s._make_optimizer(s._optimizer_settings) if training else None
    if compile_settings:
        s._compile(compile_settings)
    return s


def sgd_step_by_hand(reference, outputs):
    """The loss upstream's reduce_to_scalar_loss makes of one output tensor (its mean), its
    backward and SGD's update at lr 0.01 on `reference`, written out; the loss."""
    loss = outputs.sum() / outputs.numel()
    loss.backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= 0.01 * p.grad
    return loss


class TrainingStep(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = SmallConvNet()
        self.inputs = (torch.randn(2, 3, 8, 8),)

    def test_step_is_upstreams_step(self):
        reference = copy.deepcopy(self.model).train()
        s = session_for(self.model, training=True)
        loss, outputs = s.step(self.inputs)
        # by hand: clear, forward, loss (the mean of the outputs), backward, SGD's update
        reference.zero_grad(set_to_none=True)
        expected_outputs = reference(*self.inputs)
        expected_loss = sgd_step_by_hand(reference, expected_outputs)
        torch.testing.assert_close(loss, expected_loss.detach())
        torch.testing.assert_close(outputs, expected_outputs)
        for (name, got), want in zip(self.model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(got, want, msg=name)
            torch.testing.assert_close(got.grad, want.grad, msg=name)
        torch.testing.assert_close(self.model.bn.running_mean, reference.bn.running_mean)

    def test_a_keyword_model_is_called_by_name_and_its_own_output_reduced(self):
        # TorchBench's hf_* models: upstream's step calls mod(**inputs) and takes
        # reduce_to_scalar_loss of the model's own output, the logits' mean for a MaskedLMOutput
        # (not the loss the model computes from the labels); zoobench's rows compare the
        # wrapper's flat outputs (the logits).
        from zoo_export.sources.torchbench_transformers import UpstreamLossOutputs

        torch.manual_seed(0)
        model = KeywordMaskedLM()
        reference = copy.deepcopy(model)
        inputs = (torch.randn(2, 8), torch.randn(2, 8))
        s = session_for(UpstreamLossOutputs(model, ["input_ids", "labels"]), training=True)
        loss, outputs = s.step(inputs)
        self.assertEqual(model.called_with, ["input_ids", "labels"])
        # the model itself, not through the wrapper (whose forward records its output names)
        self.assertEqual(s.module.output_names, [])
        expected_logits = reference.a(inputs[0])
        expected_loss = sgd_step_by_hand(reference, expected_logits)
        torch.testing.assert_close(loss, expected_loss.detach())
        self.assertEqual(len(outputs), 1)
        torch.testing.assert_close(outputs[0], expected_logits)
        for (name, got), want in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(got, want, msg=name)
        # The uncompiled step (the eager reference) calls it the same way.
        model.called_with = None
        s.step_uncompiled(inputs)
        self.assertEqual(model.called_with, ["input_ids", "labels"])

    def test_no_optimizer_steps_nothing_as_upstreams_ci_skip_optimizer(self):
        # upstream's optimizer_zero_grad then clears the module's gradients, and no step runs
        s = session_for(self.model, training=True, optimizer="none")
        before = [p.detach().clone() for p in self.model.parameters()]
        for _ in range(2):
            s.step(self.inputs)
        for got, want in zip(self.model.parameters(), before):
            self.assertTrue(torch.equal(got, want))
            self.assertIsNotNone(got.grad)
        reference = copy.deepcopy(self.model)
        reference.zero_grad(set_to_none=True)
        out = reference(*self.inputs)
        (out.sum() / out.numel()).backward()
        for got, want in zip(self.model.parameters(), reference.parameters()):
            torch.testing.assert_close(got.grad, want.grad)  # one step's, not two summed

    def test_warm_up_leaves_parameters_buffers_and_optimizer_state_as_they_were(self):
        for optimizer in ("sgd", "adam", "none"):
            with self.subTest(optimizer=optimizer):
                model = copy.deepcopy(self.model)
                s = session_for(model, training=True, optimizer=optimizer)
                before = [t.detach().clone() for t in s._model_state()]
                s._warm_up(self.inputs, 3)
                for got, want in zip(s._model_state(), before):
                    self.assertTrue(torch.equal(got, want))
                # the next step is the first step of a fresh model and optimizer
                fresh = session_for(copy.deepcopy(self.model), training=True, optimizer=optimizer)
                for _ in range(2):
                    got_loss, _ = s.step(self.inputs)
                    want_loss, _ = fresh.step(self.inputs)
                    torch.testing.assert_close(got_loss, want_loss)
                for got, want in zip(s._model_state(), fresh._model_state()):
                    torch.testing.assert_close(got, want)

    def test_the_eager_step_before_compiling_has_its_own_optimizer_and_keeps_the_rng(self):
        # Dropout draws from the generator: the step must not move it, nor leave Adam's state
        # in the optimizer the compiled step is traced with (upstream's starts empty).
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
        s, inputs = session_for(model, training=True, optimizer="adam"), (torch.randn(2, 8),)
        optimizer, rng = s.optimizer, torch.random.get_rng_state()
        before = [p.detach().clone() for p in model.parameters()]
        s._eager_step_first(inputs)
        self.assertIs(s.optimizer, optimizer)
        self.assertEqual(len(optimizer.state), 0)
        self.assertTrue(torch.equal(torch.random.get_rng_state(), rng))
        self.assertFalse(all(torch.equal(p, b) for p, b in zip(model.parameters(), before)),
                         "the eager step did not step")
        self.assertTrue(all(p.grad is None for p in model.parameters()))

    @unittest.skipUnless(CAN_COMPILE, "torch.compile does not run with this torch")
    def test_a_compiled_warm_up_steps_eagerly_first_and_leaves_the_model_as_it_was(self):
        model = copy.deepcopy(self.model)
        s = session_for(model, training=True, optimizer="adam", compile_settings={"backend": "eager"})
        eager_steps = []
        eager_step = s._eager_step_first
        s._eager_step_first = lambda inputs: eager_steps.append(eager_step(inputs))
        before = [t.detach().clone() for t in s._model_state()]
        s._warm_up(self.inputs, 2)
        self.assertEqual(len(eager_steps), 1)
        for got, want in zip(s._model_state(), before):
            self.assertTrue(torch.equal(got, want))
        fresh = session_for(copy.deepcopy(self.model), training=True, optimizer="adam")
        torch.testing.assert_close(s.step(self.inputs)[0], fresh.step(self.inputs)[0])
        s.close()

class DropoutWhenAbove0(nn.Module):
    """Calls dropout only when its probability is above 0, as nvidia_deeprecommender does."""

    def __init__(self, p=0.5):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.drop_prob = p
        self.drop = nn.Dropout(p)

    def forward(self, x):
        x = self.a(x)
        if self.drop_prob > 0:
            x = self.drop(x)
        return x


class DropoutByMode(unittest.TestCase):
    """set_mode: a module that trains has its dropout set to 0 (deterministic steps); in eval
    mode the model keeps it as built, as upstream's torchbench models do."""

    def test_eval_mode_keeps_the_models_dropout_as_built(self):
        model = DropoutWhenAbove0()
        session_module.set_mode(model, trains=False, keep_dropout=False)
        self.assertFalse(model.training)
        self.assertEqual((model.drop.p, model.drop_prob), (0.5, 0.5))
        x = torch.randn(64, 8)
        self.assertTrue(torch.equal(model(x), model.a(x)))  # eval: dropout does nothing

    def test_a_module_that_trains_has_its_dropout_set_to_0_unless_the_model_keeps_it(self):
        x = torch.randn(64, 8)
        model = DropoutWhenAbove0()
        session_module.set_mode(model, trains=True, keep_dropout=False)
        self.assertTrue(model.training)
        self.assertEqual((model.drop.p, model.drop_prob), (0.0, 0.0))
        self.assertTrue(torch.equal(model(x), model.a(x)))
        kept = DropoutWhenAbove0()
        session_module.set_mode(kept, trains=True, keep_dropout=True)
        self.assertEqual(kept.drop.p, 0.5)
        self.assertFalse(torch.equal(kept(x), kept.a(x)))  # half the elements dropped


class GraphBreakReasons(unittest.TestCase):
    """The rows' detail.graph_break_reasons, from counters shaped as dynamo keeps them
    (collections.Counter of reason -> count, zero counts left by Counter arithmetic)."""

    def test_most_frequent_first_zero_counts_out_long_reasons_cut(self):
        import collections
        counters = {"graph_break": collections.Counter(
            {"call to backward()": 2, "skipped: clone_inputs": 1, "gone": 0, "x" * 400: 1})}
        listed = session_module.graph_break_reasons(counters)
        self.assertEqual([b["count"] for b in listed], [2, 1, 1])
        self.assertEqual(listed[0]["reason"], "call to backward()")
        self.assertEqual(listed[1]["reason"], "skipped: clone_inputs")
        self.assertEqual(len(listed[2]["reason"]), 300)
        self.assertEqual(session_module.graph_break_reasons(counters, limit=1),
                         [{"reason": "call to backward()", "count": 2}])


class FramesNotConverted(unittest.TestCase):
    """The rows' detail.frames_not_converted, from records shaped as dynamo's compilation
    metrics (co_name, co_filename, co_firstlineno, fail_type, fail_reason; fail_type None for a
    frame it converted)."""

    def test_only_failed_frames_in_order_with_their_reasons(self):
        from types import SimpleNamespace as Metric
        metrics = [
            Metric(co_name="_train_step", co_filename="/x/session.py", co_firstlineno=212,
                   fail_type=None, fail_reason=None),
            Metric(co_name="torch_dynamo_resume_in_training_loss_at_428",
                   co_filename="/x/session.py", co_firstlineno=415, fail_type="SkipFrame",
                   fail_reason="no content in function call"),
            Metric(co_name="step", co_filename="/t/sgd.py", co_firstlineno=9,
                   fail_type="Unsupported", fail_reason="y" * 400),
        ]
        listed = frame_watch.frames_not_converted(metrics)
        self.assertEqual([f["frame"] for f in listed],
                         ["torch_dynamo_resume_in_training_loss_at_428 (session.py:415)",
                          "step (sgd.py:9)"])
        self.assertEqual(listed[0]["reason"], "SkipFrame: no content in function call")
        self.assertEqual(len(listed[1]["reason"]), 300)
        self.assertEqual(len(frame_watch.frames_not_converted(metrics, limit=1)), 1)
        self.assertEqual(frame_watch.frames_not_converted([]), [])


class FramesGivenUp(unittest.TestCase):
    """frame_watch: the frames fallbacks_to_eager counts, each with the reason dynamo's
    compilation metrics give it, and a plain word where they record none (a skipped frame)."""

    def test_each_frame_in_order_with_its_recorded_reason_or_none(self):
        from types import SimpleNamespace as Metric
        metrics = [
            Metric(co_name="_train_step", co_firstlineno=212, fail_type=None, fail_reason=None),
            Metric(co_name="step", co_firstlineno=9, fail_type="Unsupported", fail_reason="y" * 400),
            Metric(co_name="tail", co_firstlineno=40, fail_type="Unsupported", fail_reason="other line"),
        ]
        frames = [("torch_dynamo_resume_in_training_loss_at_428", "session.py", 415, ""),
                  ("step", "sgd.py", 9, "_optimizer_step (session.py:249)"),
                  ("tail", "session.py", 41, "")]
        named = frame_watch.named_with_reasons(frames, metrics)
        self.assertEqual([f["frame"] for f in named],
                         ["torch_dynamo_resume_in_training_loss_at_428 (session.py:415)",
                          "step (sgd.py:9)", "tail (session.py:41)"])
        self.assertEqual(named[0]["reason"], frame_watch.NO_FAILURE_RECORDED)
        self.assertEqual(named[1]["reason"], ("Unsupported: " + "y" * 400)[:300])
        self.assertEqual(named[2]["reason"], frame_watch.NO_FAILURE_RECORDED)  # another line
        # the caller where the watch saw one, nothing at the top of the stack
        self.assertEqual([f.get("called_from") for f in named],
                         [None, "_optimizer_step (session.py:249)", None])
        self.assertEqual(len(frame_watch.named_with_reasons(frames, metrics, limit=1)), 1)
        self.assertEqual(frame_watch.named_with_reasons([], metrics), [])

    def test_caller_from_the_frame_or_else_from_the_interpreter_stack(self):
        import json.decoder
        from types import SimpleNamespace as Frame
        library_code = json.decoder.JSONDecoder.decode.__code__

        def captured():
            return sys._getframe()

        # a frame with its f_back: that caller
        with_back = Frame(f_code=library_code, f_back=captured())
        self.assertRegex(frame_watch._caller(with_back),
                         r"^captured \(test_session_counts.py:\d+\)$")
        # as dynamo's callback gets frames on Python 3.11+, without f_back: the stack's caller
        without_back = Frame(f_code=library_code)
        self.assertRegex(frame_watch._caller(without_back),
                         r"^test_caller_from_the_frame_or_else_from_the_interpreter_stack "
                         r"\(test_session_counts.py:\d+\)$")
        # a caller in the frame's own file (a library's helper): also the first caller outside it
        own_file = Frame(f_code=captured.__code__)
        self.assertRegex(frame_watch._caller(own_file), r"^test_caller_\w+ "
                         r"\(test_session_counts.py:\d+\), from \w+ \(case.py:\d+\)$")

    @unittest.skipIf(CAN_COMPILE, "this torch has dynamo's frame converter")
    def test_nothing_to_watch_without_dynamo(self):
        self.assertFalse(frame_watch.start())

    @unittest.skipUnless(CAN_COMPILE, "torch.compile does not run with this torch")
    def test_the_frames_given_up_are_the_ones_counted(self):
        from torch._dynamo.utils import counters
        import torch._dynamo

        def nothing_to_compile(x):
            return x  # no operation on a tensor

        def breaks_in_a_loop(x):
            for _ in range(2):
                x = x + 1
                torch._dynamo.graph_break()
            return x

        torch._dynamo.reset()
        counters.clear()
        self.assertTrue(frame_watch.start())
        frame_watch.clear()
        for fn in (nothing_to_compile, breaks_in_a_loop):
            torch.compile(fn, backend="eager")(torch.ones(2))
        given_up = frame_watch.given_up()
        counted = counters["frames"]["total"] - counters["frames"]["ok"]
        self.assertGreaterEqual(counted, 1)
        self.assertEqual(len(given_up), counted)
        for name, where, _, caller in given_up:
            self.assertEqual(where, "test_session_counts.py")
            self.assertTrue(name in ("nothing_to_compile", "breaks_in_a_loop") or
                            name.startswith("torch_dynamo_resume_in_"), name)
            self.assertRegex(caller, r"^\S+ \(\S+\.py:\d+\)(, from \S+ \(\S+\.py:\d+\))?$")
        # Past dynamo's wrapper, who called each frame: this test for the functions it compiled
        # (which of them dynamo gives up on depends on torch's version), the function a resume
        # function continues for those dynamo makes at a break.
        for name, _, _, caller in given_up:
            expected = ("breaks_in_a_loop (" if name.startswith("torch_dynamo_resume_in_")
                        else "test_the_frames_given_up_are_the_ones_counted (")
            self.assertTrue(caller.startswith(expected), (name, caller))


class TrainingLossInputs(unittest.TestCase):
    """Upstream's reduce_to_scalar_loss takes outputs whose leaves are all floating tensors;
    anything else goes to zoobench's own reduction."""

    def test_floating_leaves_only_and_something_to_reduce(self):
        f, i = torch.ones(2), torch.ones(2, dtype=torch.long)
        self.assertTrue(session_module._all_floating((f, {"a": f, "b": [f, f]})))
        self.assertFalse(session_module._all_floating((f, {"a": f, "b": [f, i]})))
        self.assertFalse(session_module._all_floating([f, None]))
        self.assertFalse(session_module._all_floating(()))
        self.assertFalse(session_module._all_floating({"a": {}}))

    @unittest.skipUnless(session_module._UPSTREAM_REDUCE_TO_SCALAR_LOSS, "torch has no reduce_to_scalar_loss")
    def test_the_steps_upstream_loss_is_the_rules_loss_scaled_or_not(self):
        # The step calls upstream's compute_loss (or scaled_compute_loss) where training_loss
        # would call upstream's reduction: the same value, the model's loss scale applied.
        outputs = (torch.randn(3, 4), {"a": torch.randn(5)})
        for scale in (1.0, 0.001):
            s = session_for(SmallConvNet(), training=True)
            s.loss_scale = scale
            upstream_loss = s._upstream_loss_of_rule()
            self.assertIsNotNone(upstream_loss)
            torch.testing.assert_close(upstream_loss(outputs), session_module.training_loss(
                outputs, s.loss_rule, scale), rtol=0, atol=0)
        s.loss_rule = "first_output"  # HuggingFace's own loss: not upstream's reduction
        self.assertIsNone(s._upstream_loss_of_rule())


class CompilePhases(unittest.TestCase):
    """The rows' detail.dynamo_compile_s: the seconds each of dynamo's phases took between two
    readings of its cumulative totals (this model's compile, not the process's)."""

    def test_differences_of_cumulative_totals_with_idle_phases_left_out(self):
        before = {"entire_frame_compile": 10.0, "inductor_compile": 6.0, "code_gen": 2.0,
                  "total_wall_time": 10.0}
        after = {"entire_frame_compile": 14.25, "inductor_compile": 6.0, "code_gen": 3.0004,
                 "entire_backward_compile": 2.5, "total_wall_time": 16.75}
        self.assertEqual(session_module.phase_seconds_since(before, after),
                         {"entire_frame_compile": 4.25, "code_gen": 1.0,
                          "entire_backward_compile": 2.5, "total_wall_time": 6.75})
        self.assertEqual(session_module.phase_seconds_since({}, {}), {})
        self.assertEqual(session_module.phase_seconds_since(after, after), {})


@unittest.skipUnless(CAN_COMPILE, "torch.compile does not run with this torch")
class DynamoCounts(unittest.TestCase):
    def test_counts_are_dynamos_on_a_model_with_known_breaks(self):
        from torch._dynamo.utils import counters

        s = session_for(Breaking(), training=False, compile_settings={"backend": "eager"})
        s._warm_up((torch.randn(2, 8),), 2)
        facts = s.facts()
        self.assertEqual(facts["graph_breaks"], 3)
        self.assertEqual(facts["graph_breaks"], sum(counters["graph_break"].values()))
        self.assertEqual(facts["graphs"], 4)
        self.assertEqual(facts["dynamo_stats"]["unique_graphs"], counters["stats"]["unique_graphs"])
        self.assertEqual(facts["dynamo_stats"]["calls_captured"], counters["stats"]["calls_captured"])
        self.assertEqual(sum(b["count"] for b in facts["graph_break_reasons"]), 3)
        s.close()

    def test_outputs_in_a_tuple_cost_the_step_no_frame_or_break_of_zoobenchs_own(self):
        # Upstream's step gives up no frame (fallbacks_to_eager 0) and breaks where torch's
        # helpers are called, whatever the outputs: zoobench's look at the outputs before the
        # loss must add neither (a generator expression would be a frame dynamo gives up,
        # bool() of a tuple a graph break).
        facts = {}
        for model in (OneOutput(), TwoOutputs()):
            s = session_for(model, training=True, compile_settings={"backend": "eager"})
            s._warm_up((torch.randn(2, 8),), 2)
            facts[type(model).__name__] = s.facts()
            s.close()
        frames = facts["TwoOutputs"].get("frames_not_converted", [])
        self.assertEqual([f for f in frames if "session.py" in f["frame"]], [], frames)
        self.assertEqual(facts["TwoOutputs"]["graph_breaks"], facts["OneOutput"]["graph_breaks"],
                         facts["TwoOutputs"].get("graph_break_reasons"))

    def test_the_exporters_output_wrapper_gives_up_no_frame_after_a_break_in_the_model(self):
        # hf_* models run inside FlatOutputs (keyword inputs, a flat tuple out); a graph break
        # in the model must not leave a frame of the wrapper's own to dynamo's fallbacks.
        from zoo_export.model_bundle import FlatOutputs

        s = session_for(FlatOutputs(KeywordOutputsBreaking(), ["x"]), training=True,
                        compile_settings={"backend": "eager"})
        s._warm_up((torch.randn(2, 8),), 2)
        frames = s.facts().get("frames_not_converted", [])
        self.assertEqual([f for f in frames if "model_bundle.py" in f["frame"]], [], frames)
        s.close()

    @staticmethod
    def _upstream_step_breaks(model, inputs):
        """The graph breaks of upstream's torchbench.py step, call for call (clone_inputs,
        optimizer_zero_grad outside dynamo, mod(**inputs) or mod(*inputs) under its autocast
        context, compute_loss, backward, Adam's optimizer_step, collect_results on the last of
        two iterations): (count, sorted (reason, count))."""
        from torch._dynamo.testing import collect_results, reduce_to_scalar_loss
        from torch._dynamo.utils import clone_inputs, counters
        import torch._dynamo

        class UpstreamStep:
            def __init__(self, mod):
                self.optimizer = torch.optim.Adam(mod.parameters(), lr=0.01)
                self.autocast = contextlib.nullcontext

            def compute_loss(self, pred):
                return reduce_to_scalar_loss(pred)

            @torch._disable_dynamo(recursive=True)
            def optimizer_zero_grad(self, mod):
                self.optimizer.zero_grad(True)

            def optimizer_step(self):
                self.optimizer.step()

            def forward_and_backward_pass(self, mod, inputs, collect_outputs=True):
                cloned_inputs = clone_inputs(inputs)
                self.optimizer_zero_grad(mod)
                with self.autocast():
                    if isinstance(cloned_inputs, dict):
                        pred = mod(**cloned_inputs)
                    else:
                        pred = mod(*cloned_inputs)
                    loss = self.compute_loss(pred)
                loss.backward()
                self.optimizer_step()
                if collect_outputs:
                    return collect_results(mod, None, loss, cloned_inputs)
                return None

        upstream = UpstreamStep(model)
        torch._dynamo.reset()
        counters.clear()
        step = torch.compile(upstream.forward_and_backward_pass, backend="eager")
        for call in range(2):
            step(model, inputs, call == 1)
        return sum(counters["graph_break"].values()), sorted(counters["graph_break"].items())

    def _assert_breaks_as_upstreams(self, zoobench_model, upstream_model, inputs, upstream_inputs):
        upstream_breaks, upstream_reasons = self._upstream_step_breaks(upstream_model, upstream_inputs)
        s = session_for(zoobench_model, training=True, optimizer="adam",
                        compile_settings={"backend": "eager"})
        s._warm_up(inputs, 2)
        facts = s.facts()
        self.assertEqual(facts["graph_breaks"], upstream_breaks,
                         f"zoobench {facts.get('graph_break_reasons')}, upstream {upstream_reasons}")
        s.close()

    @unittest.skipUnless(_has_transformers(), "transformers is not installed for this python")
    def test_a_keyword_model_breaks_as_often_as_upstreams_step(self):
        # a keyword-input model returning transformers' own MaskedLMOutput, as the hf_* models
        from transformers.modeling_outputs import MaskedLMOutput as LibraryOutput
        from zoo_export.sources.torchbench_transformers import UpstreamLossOutputs

        torch.manual_seed(0)
        inputs = (torch.randn(2, 8), torch.randn(2, 8))
        self._assert_breaks_as_upstreams(
            UpstreamLossOutputs(KeywordMaskedLM(LibraryOutput), ["input_ids", "labels"]),
            KeywordMaskedLM(LibraryOutput), inputs, dict(zip(["input_ids", "labels"], inputs)))

    def test_a_positional_model_breaks_as_often_as_upstreams_step(self):
        # a model with positional inputs and one tensor out, as resnet50 or the timm models
        torch.manual_seed(0)
        inputs = (torch.randn(2, 3, 8, 8),)
        self._assert_breaks_as_upstreams(SmallConvNet(), SmallConvNet(), inputs, list(inputs))

    def test_a_training_step_breaks_where_upstreams_does(self):
        torch.manual_seed(0)
        s = session_for(SmallConvNet(), training=True, compile_settings={"backend": "eager"})
        s._warm_up((torch.randn(2, 3, 8, 8),), 2)
        reasons = " | ".join(b["reason"] for b in s.facts().get("graph_break_reasons", []))
        # backward() and the two calls dynamo leaves alone (clearing, SGD's step)
        self.assertGreaterEqual(s.facts()["graph_breaks"], 3, reasons)
        self.assertIn("backward", reasons.lower())
        s.close()


if __name__ == "__main__":
    unittest.main()
