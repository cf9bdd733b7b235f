"""The page in a real browser: headless Chromium, driven by Selenium through the
system's chromedriver (Debian's ``chromium`` and ``chromium-driver``; nothing is
downloaded). Pip logs in, plays, hears an agent speak, sees the status bar follow a
move, leaves, reconnects and logs in again. Every wait is on a condition."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers import run

from engine.sim.simulation import Simulation
from engine.web.server import WebServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 30.0
"""Seconds each wait allows (a slow CI machine), never a timing check."""

pytestmark = [
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver "
        "(apt-get install chromium chromium-driver)",
    ),
    pytest.mark.timeout(300),
]

T = TypeVar("T")

LOG_TEXT = """return Array.from(document.querySelectorAll('#log p:not(.echo)'))
    .map(p => p.textContent).join('\\n');"""


class Browser:
    """A headless Chromium; every call runs in a thread, so the world's loop (this
    test's) goes on serving the page meanwhile."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    @classmethod
    async def open(cls, profile: Path) -> Browser:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--no-first-run",
                         f"--user-data-dir={profile}"):  # fmt: skip
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=str(CHROMEDRIVER))
        driver = await asyncio.to_thread(webdriver.Chrome, service=service, options=options)
        return cls(driver)

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(function, *args)

    async def until(self, condition: Callable[[Any], Any], what: str) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        wait = WebDriverWait(self.driver, WAIT)
        return await asyncio.to_thread(wait.until, condition, f"waited for {what}")

    def _element(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def text_of(self, element_id: str) -> str:
        return str(self._element(element_id).text)

    async def until_text(self, element_id: str, text: str) -> None:
        await self.until(lambda _d: text in self.text_of(element_id), f"{text!r} in #{element_id}")

    async def until_shown(self, text: str) -> None:
        """Until ``text`` is in the log (not counting what the player typed)."""
        await self.until(lambda d: text in d.execute_script(LOG_TEXT), f"{text!r} in the log")

    async def type(self, line: str) -> None:
        from selenium.webdriver.common.keys import Keys

        await self.call(self._element("line").send_keys, line + Keys.ENTER)

    async def log_in(self, name: str) -> None:
        await self.until(lambda _d: self.text_of("prompt") == "Name:", "the Name: prompt")
        await self.type(name)
        await self.until(lambda _d: self._element("line").get_attribute("type") == "password",
                         "a password field")  # fmt: skip
        await self.type(f"{name.lower()}-password")
        await self.until(lambda _d: self.text_of("prompt") == f"{name}>", f"the {name}> prompt")
        assert await self.call(self._element("line").get_attribute, "type") == "text"

    async def quit(self) -> None:
        await self.call(self.driver.quit)


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    opened = await Browser.open(tmp_path / "chromium-profile")
    try:
        yield opened
    finally:
        await opened.quit()


async def test_a_person_plays_in_a_browser(
    browser: Browser, web: WebServer, sim: Simulation
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    await browser.call(browser.driver.get, web.url)
    await browser.log_in("Pip")
    assert "You are Pip, in Fixture." in await browser.call(browser.driver.execute_script, LOG_TEXT)
    assert await browser.call(browser.driver.execute_script,
                              "return document.title") == "Fixture - mudsim"  # fmt: skip

    # the status bar: the room, its exits (buttons), who else is here
    await browser.until_text("room", "The Hall")
    exits = await browser.call(browser.driver.find_elements, By.CSS_SELECTOR, "#exits button")
    assert sorted(button.text for button in exits) == ["down", "north", "stair"]
    await browser.until_text("here", "Ada, Pat")

    # three commands: look, say, a move
    await browser.type("look")
    await browser.until_shown("Also here: Ada and Pat.")
    await browser.type("say hello")
    await browser.until_shown('You say, "hello"')

    # history: the up arrow brings back what was typed
    line = await browser.call(browser.driver.find_element, By.ID, "line")
    await browser.call(line.send_keys, Keys.ARROW_UP)
    assert await browser.call(line.get_attribute, "value") == "say hello"
    await browser.call(line.send_keys, Keys.ARROW_UP)
    assert await browser.call(line.get_attribute, "value") == "look"
    await browser.call(line.send_keys, Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    assert await browser.call(line.get_attribute, "value") == ""

    # an agent speaks: it arrives live, in the TUI's colour for speech
    run(sim, "Ada", "say Welcome, Pip.")
    await browser.until_shown('Ada says, "Welcome, Pip."')
    said = await browser.call(browser.driver.find_element, By.XPATH,
                              "//div[@id='log']/p[contains(., 'Ada says')]")  # fmt: skip
    assert set(str(await browser.call(said.get_attribute, "class")).split()) == {"s-bold", "s-cyan"}

    await browser.type("go north")
    await browser.until_text("room", "The Yard")
    await browser.until_text("exits", "south")
    await browser.until_text("here", "Bo, Bea")

    # the server closes the connection (quit): the page says so and offers to reconnect
    await browser.type("quit")
    await browser.until_text("connection", "closed")
    await browser.until(lambda d: d.find_element(By.ID, "reconnect").is_displayed(),
                        "the Reconnect button")  # fmt: skip
    await browser.call(browser.driver.find_element(By.ID, "reconnect").click)
    await browser.until_text("connection", "connected")
    await browser.log_in("Pip")
    await browser.until_text("room", "The Yard")  # where Pip stayed

    messages = await browser.call(browser.driver.get_log, "browser")
    blocked = [m["message"] for m in messages if "Content Security Policy" in m["message"]]
    assert not blocked  # the page's own script and style run under its strict policy


GAP_BELOW = """const log = document.getElementById('log');
    return log.scrollHeight - log.scrollTop - log.clientHeight;"""
LAST_SHOWN = "return document.querySelector('#log p:last-child').textContent;"


async def test_the_input_keeps_the_focus_and_the_log_its_last_line(
    browser: Browser, web: WebServer
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser.driver
    await browser.call(driver.set_window_size, 900, 480)  # a short log, which scrolls
    await browser.call(driver.get, web.url)
    await browser.log_in("Pip")
    await browser.until_text("room", "The Hall")

    # an exit button: the move is made, and what is typed next goes to the input line
    north = await browser.call(driver.find_element, By.CSS_SELECTOR, "#exits button[aria-label='go north']")  # fmt: skip
    await browser.call(north.click)
    await browser.until_text("room", "The Yard")
    focused = await browser.call(lambda: driver.switch_to.active_element)
    assert await browser.call(focused.get_attribute, "id") == "line"
    await browser.call(focused.send_keys, "say after the click" + Keys.ENTER)
    await browser.until_shown('You say, "after the click"')

    # the Send button: the same
    line = await browser.call(driver.find_element, By.ID, "line")
    await browser.call(line.send_keys, "say sent by the button")
    await browser.call(driver.find_element(By.ID, "send").click)
    await browser.until_shown('You say, "sent by the button"')
    focused = await browser.call(lambda: driver.switch_to.active_element)
    assert await browser.call(focused.get_attribute, "id") == "line"

    # a log longer than its box; quit: its last line, the goodbye, is in view
    for _ in range(3):
        await browser.type("help")
    await browser.until(lambda d: d.execute_script(LOG_TEXT).count("Categories") == 3,
                        "three helps")  # fmt: skip
    await browser.type("quit")
    await browser.until_text("connection", "closed")
    await browser.until(lambda d: d.find_element(By.ID, "reconnect").is_displayed(),
                        "the Reconnect button")  # fmt: skip
    assert "Goodbye." in await browser.call(driver.execute_script, LAST_SHOWN)
    assert await browser.call(driver.execute_script, GAP_BELOW) <= 1

    # closed: no exit to click, nothing to type or send
    assert await browser.call(driver.find_elements, By.CSS_SELECTOR, "#exits button") == []
    assert not await browser.call(driver.find_element(By.ID, "line").is_enabled)
    assert not await browser.call(driver.find_element(By.ID, "send").is_enabled)
