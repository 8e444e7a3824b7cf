"""The received text of a conversation a turn later takes over the text written for the turn before;
it must be exactly the text written afresh, and only taken over for the very same message objects."""

from evalkit.flow.received import ReceivedText


def _messages(n):
    return [{"role": "user" if k % 2 else "assistant", "content": f"turn {k}", "n": k} for k in range(n)]


def test_longer_conversation_of_the_same_messages_reads_as_written_afresh():
    messages = _messages(30)
    received = ReceivedText()
    for n in range(1, 31):
        conversation = {"messages": messages[:n], "temperature": 0.2, "stop": None, "seed": 7}
        assert received(conversation) == ReceivedText()(conversation)
    assert received(messages[:12]) == ReceivedText()(messages[:12])  # shorter again: written afresh


def test_equal_but_different_messages_are_not_taken_over():
    received = ReceivedText()
    first = [{"n": 1} for _ in range(10)]
    received(first)
    # Equal to the first items (1 == 1.0 == True) but other objects, written differently.
    second = [{"n": 1.0} for _ in range(10)] + [{"n": True}]
    assert received(second) == ReceivedText()(second)
    assert '"n":1.0' in received(second) and '"n":1,' not in received(second)
    third = first + [("a", 2)]  # the same objects and more: taken over, the tuple written as a list
    assert received(third) == ReceivedText()(third) and received(third).endswith(',[a,2]]')
