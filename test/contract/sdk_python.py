"""The official Python `openai` SDK, unchanged, against a local Sluice.

Run by test/contract/sdk-python.test.ts with the base URL and key as arguments; exits
non-zero on the first failed check (an assertion or an SDK error) and prints what it
saw as one JSON line on success.
"""
import json
import sys

import openai
from openai import OpenAI

base_url, key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=key, max_retries=0)
messages = [{"role": "user", "content": "tell me about sluices"}]
seen = {"sdk": openai.__version__}

chat = client.chat.completions.create(model="m", messages=messages, max_tokens=8)
assert chat.object == "chat.completion" and chat.choices[0].message.content, chat
seen["chat"] = chat.usage.total_tokens

# A loop that reads choices[0] on every chunk: an unrequested usage chunk would break it.
chunks, text = 0, ""
for chunk in client.chat.completions.create(model="m", messages=messages, stream=True):
    chunks += 1
    text += chunk.choices[0].delta.content or ""
    assert chunk.usage is None, chunk
assert chunks > 2 and text, (chunks, text)
seen["chat_stream_chunks"] = chunks

last = None
for chunk in client.chat.completions.create(
    model="m", messages=messages, stream=True, stream_options={"include_usage": True}
):
    last = chunk
assert last.choices == [] and last.usage.total_tokens > 0, last
seen["chat_stream_usage"] = last.usage.total_tokens

completion = client.completions.create(model="m", prompt="Once upon", max_tokens=6)
assert completion.choices[0].text, completion
text = "".join(c.choices[0].text for c in client.completions.create(model="m", prompt=[1, 2, 3], stream=True))
assert text
seen["completions"] = completion.usage.total_tokens

embeddings = client.embeddings.create(model="m", input=["a", "b"])
assert len(embeddings.data) == 2 and all(isinstance(x, float) for x in embeddings.data[0].embedding), embeddings
seen["embeddings"] = len(embeddings.data[0].embedding)

ids = [m.id for m in client.models.list()]
assert ids == ["m"], ids
model = client.models.retrieve("m")
assert model.id == "m" and model.object == "model", model
try:
    client.models.retrieve("nope")
    raise AssertionError("retrieving an unknown model should fail")
except openai.NotFoundError as error:
    assert error.status_code == 404
seen["models"] = ids

response = client.responses.create(model="m", input="hello", instructions="be brief")
assert response.status == "completed" and response.output_text, response
seen["responses"] = response.usage.total_tokens

types, text = [], ""
for event in client.responses.create(model="m", input="hello", stream=True):
    types.append(event.type)
    if event.type == "response.output_text.delta":
        text += event.delta
assert types[0] == "response.created" and types[-1] == "response.completed" and text, types
seen["responses_stream_events"] = len(types)

try:
    client.chat.completions.create(model="m", messages=messages, n=0)
    raise AssertionError("n=0 should be refused")
except openai.BadRequestError as error:
    assert error.status_code == 400 and error.body["param"] == "n", error.body

print(json.dumps(seen))
