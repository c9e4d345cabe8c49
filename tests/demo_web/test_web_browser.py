"""The web demo's page in a real browser: headless Chromium driven by Selenium.

Chromium and ChromeDriver are Debian's (``apt-get install chromium chromium-driver``):
no browser is downloaded.  These tests carry the ``browser`` marker (deselected by
default; ``python -m pytest -m browser`` with the ``browser`` extra installed), and CI
runs them once.  A machine without Chromium fails them with a line that says what to
install: asked for, they never skip.

The page is loaded from the real ``stream-parser demo --web`` process, a message is
sent with the page's own controls, and the DOM is read as the person sees it: the
thinking, a tool call with its parameters, the approval, the answer.  A screenshot of
the finished run is saved (``STREAM_PARSER_SCREENSHOTS=folder`` keeps a copy there:
``docs/demo-web.png`` is made that way).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stream_parser.demo._script import task
from tests.demo_web.conftest import WebDemo
from tests.serve.upstream import Reply, Upstream, sse_pieces

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 30.0

# A reply that would run script if the page inserted model output as HTML.
HOSTILE = (
    "Here you go: <script>window.__pwned = 'script'; document.title = 'pwned'</script>"
    "<img src=x onerror=\"window.__pwned = 'img'\">"
    "<a href=\"javascript:window.__pwned = 'link'\">click me</a>"
    "<svg onload=\"window.__pwned = 'svg'\"></svg> &lt;b&gt;not bold&lt;/b&gt;"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver ({package})")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="stream-parser-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        # No connection but to the page's server: this machine's network is closed.
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1100,1400",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver: Any, script: str, timeout: float = WAIT) -> Any:
    """Wait until ``script`` (a JavaScript expression) gives a true value; return it."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(f"return {script}"),
        message=f"waited {timeout} s for: {script}",
    )


def text_of(driver: Any, selector: str) -> str:
    value = driver.execute_script(
        "const node = document.querySelector(arguments[0]); return node && node.textContent",
        selector,
    )
    assert value is not None, f"no element {selector!r}"
    return str(value)


def load(driver: Any, demo: WebDemo) -> None:
    driver.get(demo.url)
    wait_for(driver, "!document.getElementById('send').disabled")


def send(driver: Any, mode: str, text: str | None = None) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "mode")).select_by_value(mode)
    if text is not None:
        box = driver.find_element(By.ID, "content")
        box.clear()
        box.send_keys(text)
    driver.find_element(By.ID, "send").click()


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    path = folder / name
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000  # a page, not an empty picture
    keep = os.environ.get("STREAM_PARSER_SCREENSHOTS")
    if keep:
        shutil.copy(path, Path(keep) / name)
    return path


def test_the_page_streams_a_run_with_its_thinking_calls_approval_and_answer(
    browser: Any, web_demo: Callable[..., WebDemo], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    demo = web_demo()  # the scripted replies stream with pauses, as a person sees them
    load(browser, demo)
    # The task is in the box; the mode and protocol come from the command line.
    assert browser.find_element(By.ID, "content").get_attribute("value") == task("en")
    assert text_of(browser, "#model") == "scripted"
    send(browser, "react")
    # The file's body grows in the call's parameter while the model writes it.
    wait_for(
        browser,
        "document.querySelector('.call[data-tool=write_file] .param[data-param=content] pre')"
        "?.textContent.startsWith('# Summary')",
    )
    wait_for(browser, "document.querySelector('.approval button.approve')").click()
    wait_for(browser, "document.querySelector('.answer')")
    wait_for(browser, "document.querySelector('.run-end')")
    body = text_of(browser, ".call[data-tool=write_file] .param[data-param=content] pre")
    assert body == "# Summary\n\n- Open tasks: 3 (login test, release notes, a mail)\n" + (
        "- Release 0.2 is planned for next week.\n"
    )
    assert text_of(browser, ".call[data-tool=write_file] .param[data-param=path] pre") == (
        "summary.md"
    )
    assert "approved" in text_of(browser, ".call[data-tool=write_file] .approval")
    assert "wrote 103 characters" in text_of(browser, ".call[data-tool=write_file] .result")
    assert "config.toml" in text_of(browser, ".call[data-tool=list_files] .result")
    # Thinking is shown, and folded once done.
    thinking = browser.find_elements(By.CSS_SELECTOR, ".thinking")
    assert len(thinking) == 4
    assert "see which files there are" in thinking[0].get_attribute("textContent")
    assert all(t.get_attribute("open") is None for t in thinking)
    assert text_of(browser, ".answer .body").startswith("Done: summary.md lists the 3 open")
    assert browser.execute_script("return document.querySelector('.run-end').dataset.reason") == (
        "done"
    )
    # Each step shows its usage and time.
    figures = [f.text for f in browser.find_elements(By.CSS_SELECTOR, ".step .figures")]
    assert len(figures) == 4 and all("tokens" in f and " s" in f for f in figures)
    screenshot(browser, tmp_path, "demo-web.png")


def test_stop_cancels_the_run_and_the_next_message_continues(
    browser: Any, web_demo: Callable[..., WebDemo]
) -> None:
    demo = web_demo()
    load(browser, demo)
    send(browser, "function_call")
    wait_for(browser, "document.querySelectorAll('.step').length >= 2")
    browser.execute_script("document.getElementById('stop').click()")
    reason = wait_for(browser, "document.querySelector('.run-end')?.dataset.reason")
    assert reason == "cancelled"
    assert not browser.execute_script("return document.querySelector('.answer')")
    send(browser, "simple", "Check the folder again.")
    wait_for(browser, "document.querySelectorAll('.run-end').length === 2")
    ends = browser.execute_script(
        "return [...document.querySelectorAll('.run-end')].map(e => e.dataset.reason)"
    )
    assert ends == ["cancelled", "max_iterations"]


def test_the_page_speaks_chinese(browser: Any, web_demo: Callable[..., WebDemo]) -> None:
    from selenium.webdriver.common.by import By

    demo = web_demo("--no-delay", "--language", "zh")
    load(browser, demo)
    assert browser.find_element(By.ID, "send").text == "发送"
    assert browser.execute_script("return document.documentElement.lang") == "zh"
    send(browser, "function_call")
    wait_for(browser, "document.querySelector('.approval button.approve')").click()
    wait_for(browser, "document.querySelector('.answer')")
    assert text_of(browser, ".answer h3") == "回答"
    assert text_of(browser, ".answer .body").startswith("完成")
    assert "第 1 步" in text_of(browser, ".step .label")


def test_a_reply_holding_markup_shows_as_text_and_runs_nothing(
    browser: Any, web_demo: Callable[..., WebDemo], tmp_path: Path
) -> None:
    upstream = Upstream().start()
    try:
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "local",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": HOSTILE}}],
        }
        end = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        upstream.add(Reply(pieces=sse_pieces([chunk, end])), key="default")
        demo = web_demo("--base-url", upstream.url, "--protocol", "native")
        load(browser, demo)
        send(browser, "function_call", "Say something.")
        wait_for(browser, "document.querySelector('.run-end')")
        assert text_of(browser, ".answer .body") == HOSTILE
        assert HOSTILE in text_of(browser, ".step .text")
        assert browser.execute_script("return window.__pwned === undefined")
        assert browser.title == "stream-parser demo"
        # Nothing of the reply became an element.
        assert (
            browser.execute_script(
                "return document.querySelectorAll('#log script, #log img, #log a, #log svg').length"
            )
            == 0
        )
        # The request went through the real SDK to the loopback server.
        sent = json.loads(upstream.requests[-1].body)
        assert sent["messages"][-1]["content"] == "Say something." and sent["stream"] is True
        screenshot(browser, tmp_path, "demo-web-markup.png")
    finally:
        upstream.stop()


LIVE_URL = os.environ.get("STREAM_PARSER_LIVE_BASE_URL")
LIVE_MODEL = os.environ.get("STREAM_PARSER_LIVE_MODEL")


@pytest.mark.live
@pytest.mark.timeout(900)
@pytest.mark.skipif(
    not (LIVE_URL and LIVE_MODEL),
    reason="set STREAM_PARSER_LIVE_BASE_URL and STREAM_PARSER_LIVE_MODEL to run",
)
def test_a_live_servers_reply_streams_into_the_page(
    browser: Any, web_demo: Callable[..., WebDemo], tmp_path: Path
) -> None:
    demo = web_demo(
        "--base-url", LIVE_URL or "", "--model", LIVE_MODEL or "",
        "--instructions-role", "user", "--max-tokens", "160", "--timeout", "300",
    )  # fmt: skip
    load(browser, demo)
    send(browser, "react", "List the files, then say in one sentence what this project is.")
    # Deny whatever asks for approval: the run goes on either way.
    wait_for(
        browser,
        "(document.querySelector('.approval button.deny')?.click(), "
        "document.querySelector('.run-end'))",
        timeout=600,
    )
    assert browser.execute_script("return document.querySelector('.run-end').dataset.reason") in (
        "done", "length", "max_iterations", "max_tool_calls",
    )  # fmt: skip
    shown = text_of(browser, ".step")
    assert shown.strip(), "nothing of the reply reached the page"
    assert not browser.execute_script("return document.querySelector('#log > .error')")
    screenshot(browser, tmp_path, "demo-web-live.png")
