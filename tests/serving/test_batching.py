"""The batching generator against the sequential one on the tiny Llama: same answers, isolation, limits."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import ThreadingHTTPServer

import pytest

from compoworld_assets.serving.openai_server import ChatModel, make_handler
from compoworld_assets.serving.settings import BatchSettings

# A long window makes requests submitted together start as one batch; small blocks let the
# tiny model's short prompts reach the prefix cache.
TEST_BATCHING = BatchSettings(max_batch_size=6, window_s=0.5, block_size=16)
TOPICS = ["cats", "the weather in a small harbour town", "tea", "a very long train journey across the plains",
          "maps", "jazz", "rain", "bread"]


@pytest.fixture(scope="module")
def models(tiny_model_dir):
    sequential = ChatModel(tiny_model_dir, "tiny", batching=None)
    batched = ChatModel(tiny_model_dir, "tiny", batching=TEST_BATCHING)
    yield sequential, batched
    batched.close()


def chat(k: int, **options) -> dict:
    return {"messages": [{"role": "user", "content": f"Note {k} about {TOPICS[k % len(TOPICS)]}."}],
            "max_tokens": 6 + 3 * (k % 4), **options}


def together(model: ChatModel, requests: list[dict]) -> list[dict]:
    prepared = [model.prepare(r) for r in requests]
    futures = [model.generator.submit(p) for p in prepared]
    return [f.result() for f in futures]


def test_batched_greedy_equals_sequential_greedy(models):
    sequential, batched = models
    requests = [chat(k) for k in range(10)]  # more than max_batch_size: later ones join a running batch
    expected = [sequential.generator.generate(sequential.prepare(r)) for r in requests]
    before = batched.generator.stats["steps"]
    results = together(batched, requests)
    assert [r.token_ids for r in results] == [e.token_ids for e in expected]
    assert [r.text for r in results] == [e.text for e in expected]
    assert batched.generator.stats["max_batch"] > 1 and batched.generator.stats["steps"] > before


def test_seeded_sampling_does_not_depend_on_batch_mates(models):
    sequential, batched = models
    request = chat(1, temperature=0.9, seed=7, max_tokens=12)
    alone = batched.generator.generate(batched.prepare(request))
    mates = [chat(k, temperature=0.7, seed=k) for k in range(5)]
    in_batch = together(batched, [*mates[:2], request, *mates[2:]])[2]
    assert in_batch.token_ids == alone.token_ids
    assert sequential.generator.generate(sequential.prepare(request)).token_ids == alone.token_ids
    other_seed = batched.generator.generate(batched.prepare({**request, "seed": 8}))
    assert other_seed.token_ids != alone.token_ids


def test_max_tokens_and_stop_strings_are_per_request(models):
    sequential, batched = models
    requests = [chat(k, max_tokens=n) for k, n in enumerate([1, 2, 5, 9])]
    results = together(batched, requests)
    assert [len(r.token_ids) for r in results] == [1, 2, 5, 9]  # the random model never emits an end token here
    assert all(r.finish_reason == "length" for r in results)
    free = sequential.generator.generate(sequential.prepare(chat(3, max_tokens=20)))
    stop = free.text[4:6]
    stopped = together(batched, [chat(3, max_tokens=20, stop=[stop]), chat(5)])[0]
    assert stopped.finish_reason == "stop" and stopped.text == free.text[:free.text.index(stop)]
    assert sequential.generator.generate(sequential.prepare(chat(3, max_tokens=20, stop=stop))).text == stopped.text


def test_a_failing_request_does_not_break_its_batch_mates(models):
    sequential, batched = models
    good = [chat(k) for k in range(4)]
    broken = chat(9, temperature=1e-45)  # logits / 1e-45 overflow: sampling raises on NaN probabilities
    futures = [batched.generator.submit(batched.prepare(r)) for r in [good[0], good[1], broken, good[2], good[3]]]
    with pytest.raises(RuntimeError, match="probability tensor"):
        futures[2].result()
    answers = [f.result().token_ids for k, f in enumerate(futures) if k != 2]
    assert answers == [sequential.generator.generate(sequential.prepare(r)).token_ids for r in good]


def test_a_continued_conversation_reuses_cached_blocks(models):
    sequential, batched = models
    first = chat(1, max_tokens=8)
    reply = batched.complete(first)["choices"][0]["message"]
    follow_up = {**first, "messages": [*first["messages"], reply, {"role": "user", "content": "And then?"}]}
    cached_before = batched.generator.stats["prompt_tokens_cached"]
    answer = batched.complete(follow_up)
    assert batched.generator.stats["prompt_tokens_cached"] - cached_before >= 2 * TEST_BATCHING.block_size
    assert answer["choices"][0]["message"] == sequential.complete(follow_up)["choices"][0]["message"]


def _post(api_base: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(f"{api_base}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_concurrent_http_requests_are_all_answered(models):
    sequential, batched = models
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(batched))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api_base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    bodies = [chat(k, model="tiny") for k in range(12)]
    bodies[5] = chat(5, model="tiny", temperature=1e-45)
    bodies[8] = {**chat(8, model="tiny"), "max_tokens": 900}  # over the context: refused before generation
    try:
        with ThreadPoolExecutor(len(bodies)) as pool:
            replies = list(pool.map(lambda body: _post(api_base, body), bodies))
        with urllib.request.urlopen(f"{api_base}/stats") as response:
            stats = json.load(response)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert replies[5][0] == 500 and replies[5][1]["error"]["code"] == "generation_failed"
    assert replies[8][0] == 400 and replies[8][1]["error"]["code"] == "context_length_exceeded"
    for k, (status, reply) in enumerate(replies):
        if k not in (5, 8):
            assert status == 200
            assert reply["choices"][0]["message"] == sequential.complete(bodies[k])["choices"][0]["message"]
    assert stats["completions"] >= 10


def test_a_cancelled_request_leaves_and_its_batch_mates_finish(models):
    sequential, batched = models
    cancelled_before = batched.generator.stats["cancelled"]
    long = batched.generator.submit(batched.prepare(chat(2, max_tokens=400)))
    mates = [batched.generator.submit(batched.prepare(chat(k))) for k in range(3)]
    assert long.cancel()  # the client gave up before its answer was ready
    assert [f.result().token_ids for f in mates] == [
        sequential.generator.generate(sequential.prepare(chat(k))).token_ids for k in range(3)]
    assert batched.generator.stats["cancelled"] == cancelled_before + 1
    assert batched.generator.generate(batched.prepare(chat(0))).token_ids == mates[0].result().token_ids
