"""The offline model's ids: fresh for every request, the same sequence for every fresh instance,
and `renumbered`, which says when two answers are the same response under different ids."""

import threading

from course_lib.offline_model.ids import Counter, for_request, renumbered


def test_each_request_of_an_instance_gets_its_own_number_and_a_fresh_instance_starts_again():
    with Counter().answering():
        first = [for_request("same body").mint("resp", 24) for _ in range(3)]
    with Counter().answering():
        again = [for_request("same body").mint("resp", 24) for _ in range(3)]
    assert first == again and len(set(first)) == 3


def test_counting_is_per_thread_context_and_safe_under_threads():
    counter = Counter()
    numbers: list[int] = []

    def work():
        with counter.answering():
            for _ in range(200):
                numbers.append(for_request("x").number)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(numbers) == list(range(800))  # no number given twice


def test_renumbered_equates_the_same_pairing_under_other_ids_and_nothing_else():
    one = {"output": [{"id": "fc_1", "call_id": "call_a"}], "input": [{"call_id": "call_a", "output": "x"}]}
    two = {"input": [{"output": "x", "call_id": "call_b"}], "output": [{"call_id": "call_b", "id": "fc_2"}]}
    assert renumbered(one) == renumbered(two)  # key order and id values aside
    crossed = {"output": [{"id": "fc_1", "call_id": "call_a"}], "input": [{"call_id": "call_z", "output": "x"}]}
    assert renumbered(crossed) != renumbered(one)  # the output answers another call: not the same
    assert renumbered({"id": "a", "text": "call_a"}) == {"id": "<id 1>", "text": "call_a"}  # text is not an id
