"""Eviction outcomes as `kubectl drain` (v0.36.3 pkg/drain) treats them, against a scripted API and a clock that only
moves when the drain sleeps: refusals then a grant, a permanent 500, a terminating namespace, the deadline."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from components.drain.evict import DrainFailed, evict_all
from components.kubeapi.client import ApiError

BUDGET = ApiError(429, "Cannot evict pod as it would violate the pod's disruption budget.", "TooManyRequests")
TWO_BUDGETS = ApiError(500, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
                            "support.", "InternalError")
NAMESPACE_GOING = ApiError(403, 'pods "train-0" is forbidden: unable to create new content in namespace team-a because '
                                "it is being terminated", "Forbidden", ("NamespaceTerminating",))
FORBIDDEN = ApiError(403, 'pods "train-0/eviction" is forbidden: User cannot create resource "pods/eviction"',
                     "Forbidden")
GONE = ApiError(404, 'pods "train-0" not found', "NotFound")
NO_ANSWER = ApiError(0, "the API server https://10.0.0.1:6443 did not answer: timed out")


def pod(deleting: bool = False) -> dict:
    meta = {"name": "train-0", "namespace": "team-a", "uid": "uid-1", "labels": {"app": "train", "tier": "gold"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T05:00:00Z"
    return {"metadata": meta}


@dataclass
class ScriptedApi:
    """Answers each eviction with the next scripted outcome (None: accepted); the Pod goes GONE_AFTER seconds
    after an accepted eviction (or at once when it was already deleting and the namespace goes)."""

    answers: list
    budgets: object = ()  # the namespace's PodDisruptionBudgets, or an ApiError listing them answers
    gone_after: float = 2.0
    now: float = 0.0
    asked: list = field(default_factory=list)
    accepted_at: float | None = None

    def post(self, path: str, body: dict) -> None:
        self.asked.append(self.now)
        answer = self.answers.pop(0) if self.answers else None
        if answer is not None and answer.status == 404:  # the Pod was already gone
            self.accepted_at, self.gone_after = self.now, 0.0
        if answer is not None:
            raise answer
        self.accepted_at = self.now

    def find(self, path: str) -> dict | None:
        if self.accepted_at is not None and self.now >= self.accepted_at + self.gone_after:
            return None
        return pod()

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def items(self, path: str, **query):
        assert path == "/apis/policy/v1/namespaces/team-a/poddisruptionbudgets", path
        if isinstance(self.budgets, ApiError):
            raise self.budgets
        return [{"metadata": {"name": name}, "spec": {"selector": selector}} for name, selector in self.budgets]


def drain(api: ScriptedApi, timeout: float = 600, the_pod: dict | None = None) -> tuple[list[str], object]:
    said: list[str] = []
    try:
        result = evict_all(api, [the_pod or pod()], timeout, said.append, clock=lambda: api.now, sleep=api.sleep)
    except DrainFailed as err:
        result = err
    return said, result


@pytest.mark.parametrize("answers, tries, evicted", [
    ([], 1, ["team-a/train-0"]),                                        # granted at once
    ([BUDGET, BUDGET, None], 3, ["team-a/train-0"]),                    # the budget lets go on the third try
    ([NO_ANSWER, None], 2, ["team-a/train-0"]),                         # a lost connection is tried again
    ([NAMESPACE_GOING, NAMESPACE_GOING, None], 3, ["team-a/train-0"]),  # a namespace being deleted is awaited
    ([GONE], 1, []),                                                    # nothing to evict: done
])
def test_outcomes_that_end_in_an_empty_node(answers, tries, evicted):
    api = ScriptedApi(list(answers))
    said, result = drain(api)
    assert not isinstance(result, DrainFailed), result
    assert len(api.asked) == tries and result.evicted == evicted
    # Each refusal waits kubectl's 5 s before the next try.
    assert [b - a for a, b in zip(api.asked, api.asked[1:])] == [5.0] * (tries - 1)


def test_refusals_are_said_once_each_not_at_every_try():
    said, _ = drain(ScriptedApi([BUDGET] * 4))
    assert sum("refused, retrying every 5 s" in line for line in said) == 1


@pytest.mark.parametrize("answer, named", [
    (TWO_BUDGETS, "more than one PodDisruptionBudget"),
    (FORBIDDEN, 'cannot create resource "pods/eviction"'),
])
def test_errors_no_wait_fixes_fail_at_once_naming_the_cause(answer, named):
    api = ScriptedApi([answer] * 100)
    said, result = drain(api)
    assert isinstance(result, DrainFailed) and named in str(result) and "team-a/train-0" in str(result)
    assert len(api.asked) == 1 and api.now == 0.0  # no retry, no wait


BUDGETS = [("train-min", {"matchLabels": {"app": "train"}}),
           ("gold", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}]}),
           ("everything", {}),  # an empty selector selects every Pod of the namespace
           ("infer", {"matchLabels": {"app": "infer"}}),
           ("no-selector", None),  # and none selects none
           ("not-batch", {"matchExpressions": [{"key": "queue", "operator": "DoesNotExist"},
                                               {"key": "app", "operator": "NotIn", "values": ["batch"]}]})]


def test_a_pod_under_several_budgets_fails_naming_the_budgets_that_select_it():
    said, result = drain(ScriptedApi([TWO_BUDGETS], budgets=BUDGETS))
    assert "budgets selecting it: everything, gold, not-batch, train-min; delete or narrow all but one" in str(result)
    denied = ApiError(403, 'poddisruptionbudgets.policy is forbidden: User "drain" cannot list resource', "Forbidden")
    said, result = drain(ScriptedApi([TWO_BUDGETS], budgets=denied))
    assert "`kubectl get pdb -n team-a` shows them (listing them here failed: poddisruptionbudgets" in str(result)


def test_a_pod_already_deleting_in_a_namespace_being_deleted_is_waited_for_not_evicted_again():
    api = ScriptedApi([NAMESPACE_GOING], gone_after=0.0)
    api.accepted_at = 30.0  # its own grace period ends at 30 s
    said, result = drain(api, the_pod=pod(deleting=True))
    assert not isinstance(result, DrainFailed) and len(api.asked) == 1 and api.now >= 30.0
    assert "team-a/train-0 is gone" in said


def test_a_budget_that_never_lets_go_fails_at_the_deadline_naming_its_refusal():
    api = ScriptedApi([BUDGET] * 1000)
    said, result = drain(api, timeout=60)
    assert isinstance(result, DrainFailed)
    assert "team-a/train-0 not evicted: Cannot evict pod as it would violate" in str(result)
    assert 60.0 <= api.now < 65.0 and len(api.asked) == 13  # a try every 5 s from 0 to 60


def test_a_pod_slow_to_terminate_is_waited_for_until_the_deadline_then_named():
    api = ScriptedApi([], gone_after=1e9)
    said, result = drain(api, timeout=120)
    assert isinstance(result, DrainFailed) and "team-a/train-0 still terminating" in str(result)
    assert len(api.asked) == 1 and 120.0 <= api.now < 121.0  # asked once, then waited


def test_the_status_causes_are_read_from_the_api_servers_answer():
    from components.kubeapi.client import _api_error
    text = ('{"kind":"Status","status":"Failure","message":"forbidden: namespace team-a is being terminated",'
            '"reason":"Forbidden","details":{"name":"train-0","kind":"pods","causes":[{"reason":"NamespaceTerminating",'
            '"message":"namespace team-a is being terminated","field":"metadata.namespace"}]},"code":403}')
    err = _api_error(403, text)
    assert (err.status, err.reason, err.causes) == (403, "Forbidden", ("NamespaceTerminating",))
    assert _api_error(500, "not json").causes == () and _api_error(500, '["a list"]').message == '["a list"]'
