"""``bedrock``: Amazon Bedrock's Converse API with a toolConfig (docs/evaluators/bedrock.md).

``--evaluator bedrock:MODEL_ID``, any model Converse serves with tools (Claude, DeepSeek, Nova,
Llama, Mistral...), by model id or inference profile id (``us.deepseek.r1-v1:0``). boto3
(``pip install 'asz-evaluators[bedrock]'``) is imported here only, when a call runs. Credentials
and the region are boto3's own (environment, profile, role), or ``region``, ``profile`` and
``endpoint_url`` in asz.yaml's ``evaluators: {bedrock: ...}``.

Usage as Bedrock says it: ``inputTokens`` excludes the cache; ``cacheReadInputTokens`` and
``cacheWriteInputTokens`` are the cache's own, and ``totalTokens`` is the four together. A cache
count Bedrock leaves out is 0 only when ``totalTokens`` shows it (input + output + the cache
counts said make the total); otherwise it is unknown.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asz_core.judge.judgment import EvaluatorCall, Request

from .api_loop import ApiEvaluator, NotSent, Reply, RequestFailed, ToolUse, Turn, count, missing

RETRY_CODES = frozenset({"ThrottlingException", "ServiceUnavailableException", "InternalServerException",
                         "ModelNotReadyException", "ModelTimeoutException", "ModelErrorException"})


def convert_usage(usage: Any, model: str | None) -> Request:
    """Converse usage in asz's four types (Bedrock's input already excludes the cache)."""
    if not isinstance(usage, dict) or count(usage.get("inputTokens")) is None:
        return Request(model=model, said=False)
    inp, out = count(usage.get("inputTokens")), count(usage.get("outputTokens"))
    read, write = count(usage.get("cacheReadInputTokens")), count(usage.get("cacheWriteInputTokens"))
    total = count(usage.get("totalTokens"))
    if total is not None and out is not None and (read is None or write is None):
        said = inp + out + (read or 0) + (write or 0)  # type: ignore[operator]
        if said == total:  # the total shows the counts left out were none
            read, write = read or 0, write or 0
    return Request(input=inp, output=out, cache_read=read, cache_write=write, model=model)


def _session(options: dict[str, Any]) -> tuple[Any, str]:
    """The boto3 session calls would use (asz.yaml's ``profile``), or None and why not."""
    try:
        import boto3
    except ImportError:
        return None, ""
    try:
        return (boto3.Session(profile_name=options["profile"]) if options.get("profile") else boto3.Session()), ""
    except Exception as exc:  # a profile that does not exist
        return None, f"{type(exc).__name__}: {exc}"


class BedrockEvaluator(ApiEvaluator):
    """Bedrock Converse, the navigation and ``submit`` as tools in a toolConfig."""

    name: ClassVar[str] = "bedrock"
    extra: ClassVar[str] = "bedrock"
    key_env: ClassVar[tuple[str, ...]] = ("AWS_BEARER_TOKEN_BEDROCK",)
    default_order: ClassVar[int | None] = 40

    @classmethod
    def modules(cls) -> tuple[str, ...]:
        return ("boto3",)

    @classmethod
    def credentials(cls, options: dict[str, Any]) -> tuple[bool, str]:
        """AWS_BEARER_TOKEN_BEDROCK, or the credentials boto3 finds itself (the environment, the
        profile of asz.yaml or AWS_PROFILE, a role): looked up, never sent anywhere."""
        import os

        if os.environ.get("AWS_BEARER_TOKEN_BEDROCK"):
            return True, "AWS_BEARER_TOKEN_BEDROCK is set"
        need = "set AWS_BEARER_TOKEN_BEDROCK or AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, a role)"
        session, why = _session(options)
        if session is None:
            return False, f"{need}: {why}" if why else need
        try:
            creds = session.get_credentials()
        except Exception as exc:  # a profile boto3 cannot read
            return False, f"{need}: {type(exc).__name__}: {exc}"
        return (True, f"AWS credentials are found ({creds.method})") if creds is not None else (False, need)

    @classmethod
    def endpoint_problem(cls, options: dict[str, Any]) -> str | None:
        """A region (asz.yaml's ``region``, else the profile's or AWS_DEFAULT_REGION), and an
        ``endpoint_url`` that is a URL when one is given."""
        from .api_loop import url_problem

        if options.get("endpoint_url") is not None:
            bad = url_problem(options["endpoint_url"], "endpoint_url in evaluators: {bedrock: ...}")
            if bad:
                return bad
        if options.get("region"):
            return None
        session, _ = _session(options)
        if session is not None and not session.region_name:
            return "no AWS region is set: set AWS_DEFAULT_REGION, or region in evaluators: {bedrock: ...}"
        return None

    def client(self, call: EvaluatorCall, opts: dict[str, Any]) -> Any:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise missing("boto3", "bedrock") from None
        session = boto3.Session(profile_name=opts["profile"]) if opts.get("profile") else boto3.Session()
        timeout = float(opts.get("timeout") or 600)
        cfg = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=timeout, connect_timeout=30)
        kw: dict[str, Any] = {"config": cfg}
        if opts.get("region"):
            kw["region_name"] = opts["region"]
        if opts.get("endpoint_url"):
            kw["endpoint_url"] = opts["endpoint_url"]
        try:
            return session.client("bedrock-runtime", **kw)
        except Exception as exc:  # no region, a profile that does not exist
            from asz_core.errors import EvaluatorError

            raise EvaluatorError(f"bedrock: {exc} (set AWS_DEFAULT_REGION, or region in evaluators: {{bedrock: ...}})") from None

    def send(self, client: Any, model: str, system: str, turns: list[Turn], tools: list[tuple[str, str, dict[str, Any]]],
             opts: dict[str, Any]) -> Reply:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ParamValidationError

        messages: list[dict[str, Any]] = []
        for t in turns:
            if t.assistant is not None:
                messages.append({"role": "assistant", "content": t.assistant})
            content: list[dict[str, Any]] = [
                {"toolResult": {"toolUseId": r.use.id, "content": [{"text": r.text}]}} for r in t.results]
            if t.user_text:
                content.append({"text": t.user_text})
            if content:
                if messages and messages[-1]["role"] == "user":
                    messages[-1]["content"].extend(content)
                else:
                    messages.append({"role": "user", "content": content})
        kw: dict[str, Any] = {}
        sys_blocks: list[dict[str, Any]] = [{"text": system}]
        if opts.get("cache_points"):  # models that cache (Claude, Nova): a checkpoint after the prompt and the exchange
            sys_blocks.append({"cachePoint": {"type": "default"}})
            messages[-1]["content"] = [*messages[-1]["content"], {"cachePoint": {"type": "default"}}]
        if opts.get("max_tokens"):
            kw["inferenceConfig"] = {"maxTokens": int(opts["max_tokens"])}
        try:
            resp = client.converse(
                modelId=model, system=sys_blocks, messages=messages,
                toolConfig={"tools": [{"toolSpec": {"name": n, "description": d, "inputSchema": {"json": s}}} for n, d, s in tools],
                            "toolChoice": {"auto": {}}},
                **kw)
        except (NoCredentialsError, ParamValidationError) as exc:
            raise NotSent(f"{exc} (the request was not sent)") from None
        except ClientError as exc:
            err = exc.response.get("Error", {}) if isinstance(exc.response, dict) else {}
            code = str(err.get("Code") or "")
            status = (exc.response.get("ResponseMetadata") or {}).get("HTTPStatusCode") if isinstance(exc.response, dict) else None
            retry = code in RETRY_CODES or (isinstance(status, int) and status >= 500)
            raise RequestFailed(f"API error {status or ''} {code}: {err.get('Message') or exc}".replace("  ", " "),
                                retry=retry) from None
        except BotoCoreError as exc:
            raise RequestFailed(f"the answer was lost on the way ({type(exc).__name__}: {exc})", retry=True) from None
        out = resp.get("output") if isinstance(resp, dict) else None
        msg = out.get("message") if isinstance(out, dict) else None
        if not isinstance(msg, dict):  # botocore reads a body cut off halfway as an empty response
            raise RequestFailed("the answer was lost on the way (the response held no output message)", retry=True)
        content = msg.get("content") if isinstance(msg.get("content"), list) else []
        uses: list[ToolUse] = []
        texts: list[str] = []
        for b in content:
            if not isinstance(b, dict):
                continue
            if isinstance(b.get("text"), str):
                texts.append(b["text"])
            tu = b.get("toolUse")
            if isinstance(tu, dict):
                uses.append(ToolUse(str(tu.get("toolUseId")), str(tu.get("name")), tu.get("input")))
        # sent back as the model gave it, but for blank text blocks, which Converse refuses
        echo = [b for b in content if isinstance(b, dict) and not ("text" in b and not str(b["text"]).strip())]
        echo = echo or [{"text": "(no answer)"}]
        usage = resp.get("usage") if isinstance(resp, dict) else None
        req = convert_usage(usage, model)
        reported = {"model": model, "stopReason": resp.get("stopReason") if isinstance(resp, dict) else None,
                    "usage": usage, "metrics": resp.get("metrics") if isinstance(resp, dict) else None}
        return Reply(assistant=echo, uses=uses, text="".join(texts), request=req, reported=reported)
