#!/usr/bin/env python3
"""Opens the operator dashboard in headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) and prints one JSON object with what the browser saw, for DashboardBrowserTests to check:

  python3 dashboard_browser.py ADMIN_URL SCREENSHOT_DIR PAGE...

PAGE is a path such as / or /link/nl. For each page: console messages at warning or worse, every request
that failed or answered 400 or more, each chart's labels and datasets as Chart.js holds them, after the
default range and again after choosing "Last hour", and the text of the page's status line. Screenshots
are written as SCREENSHOT_DIR/<name>.png (wide, and the overview as a phone sees it too).
"""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import Select


def driver(width, height, dark=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--hide-scrollbars"]:
        options.add_argument(argument)
    if dark:
        options.add_argument("--force-dark-mode")
        options.add_argument("--blink-settings=preferredColorScheme=0")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(browser, script, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(script)


CHARTS = """
const state = window.linkoutDashboard;
const charts = {};
for (const [id, chart] of Object.entries(state.charts)) {
  charts[id] = { labels: chart.data.labels, datasets: chart.data.datasets.map(d => ({ label: d.label, data: d.data })) };
}
return { loads: state.loads, query: state.query, charts, status: document.getElementById('status').textContent,
  tables: Object.fromEntries([...document.querySelectorAll('table')].map(t => [t.id, t.tBodies[0].rows.length])) };
"""


def network(browser):
    """The DevTools network events since the last call."""
    return [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]


def problems(browser, earlier=()):
    """Console messages at WARNING or worse, and requests that failed or answered >= 400."""
    console = [entry["message"] for entry in browser.get_log("browser") if entry["level"] in ("WARNING", "SEVERE")]
    failed = []
    for message in list(earlier) + network(browser):
        params = message.get("params", {})
        if message["method"] == "Network.responseReceived" and params["response"]["status"] >= 400:
            failed.append(f'{params["response"]["status"]} {params["response"]["url"]}')
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f'{params.get("errorText")} {params.get("requestId")}')
    return console, failed


def main():
    base, shots, pages = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3:]
    os.makedirs(shots, exist_ok=True)
    result = {"pages": {}}
    browser = driver(1280, 2300)
    try:
        for page in pages:
            browser.get(base + page)
            seen = {"title": browser.title}
            # The page's own response may reach the DevTools log a moment after get() returns (a 401 with
            # Basic leaves Chromium at its sign-in prompt): wait for it rather than guess from its absence.
            events, document = [], []
            deadline = time.time() + 15
            while not document and time.time() < deadline:
                events += network(browser)
                # Only this page's: the log may still hold the browser's blank start page (data:,).
                document = [m["params"]["response"] for m in events
                            if m["method"] == "Network.responseReceived" and m["params"].get("type") == "Document"
                            and m["params"]["response"].get("url", "").startswith(base + page)]
                if not document:
                    time.sleep(0.05)
            if document and document[0]["status"] == 401:
                # Chromium shows its own sign-in prompt, not the body: the answer's header says why.
                seen["refused"] = document[0]["headers"].get("WWW-Authenticate", "")
                seen["console"], seen["failed"] = problems(browser, events)
                result["pages"][page] = seen
                continue
            wait_for(browser, "return window.linkoutDashboard && window.linkoutDashboard.loads >= 1")
            seen["default"] = browser.execute_script(CHARTS)
            name = "overview" if page == "/" else page.strip("/").replace("/", "-")
            browser.save_screenshot(os.path.join(shots, f"{name}.png"))
            Select(browser.find_element("id", "preset")).select_by_value("hour")
            wait_for(browser, "return window.linkoutDashboard.loads >= 2")
            seen["hour"] = browser.execute_script(CHARTS)
            seen["console"], seen["failed"] = problems(browser, events)
            result["pages"][page] = seen
    finally:
        browser.quit()
    # The overview as a phone in dark mode shows it: one column, nothing wider than the screen.
    if "/" in result["pages"] and "refused" not in result["pages"]["/"]:
        phone = driver(390, 2400, dark=True)
        try:
            phone.get(base + "/")
            wait_for(phone, "return window.linkoutDashboard && window.linkoutDashboard.loads >= 1")
            result["phone"] = {
                "scrollWidth": phone.execute_script("return document.documentElement.scrollWidth"),
                "innerWidth": phone.execute_script("return window.innerWidth"),
                "dark": phone.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches"),
            }
            phone.save_screenshot(os.path.join(shots, "overview-phone-dark.png"))
            result["phone"]["console"], result["phone"]["failed"] = problems(phone)
        finally:
            phone.quit()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
