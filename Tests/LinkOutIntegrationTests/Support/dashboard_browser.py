#!/usr/bin/env python3
"""Opens the operator dashboard in headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) and prints one JSON object with what the browser saw, for DashboardBrowserTests to check:

  python3 dashboard_browser.py ADMIN_URL SCREENSHOT_DIR [--address] [--prefix=NAME] PAGE...

PAGE is a path such as / or /link/nl. For each page: console messages at warning or worse, every request
that failed or answered 400 or more, and what the page shows (SHOWN: each chart's labels, datasets and
visits' colours as Chart.js holds them, the headline numbers, the range picker, the address, the links
to the other pages, the experiments' section), with the default range and again after choosing "Last
day". Screenshots are written as SCREENSHOT_DIR/<prefix><name>.png (wide, and the overview as a phone sees
it too).

--address follows the range through the address: /link/nl?range=week opened, the link to de followed, a
custom range submitted, back, forward, and a reload (under "address").
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


def shown_after(browser, script, timeout=10):
    """What the page shows once `script` holds, or when the wait ran out (for the test to say what differs)."""
    try:
        wait_for(browser, script, timeout)
    except TimeoutError:
        pass
    return browser.execute_script(SHOWN)


SHOWN = """
const state = window.linkoutDashboard;
const $ = (id) => document.getElementById(id);
// What is not on the page reads as null (the script also reads older pages, for a test to fail on).
const shown = (id) => $(id) !== null && $(id).getClientRects().length > 0;
const charts = {};
for (const [id, chart] of Object.entries(state.charts)) {
  charts[id] = { labels: chart.data.labels,
    datasets: chart.data.datasets.map(d => ({ label: d.label, data: d.data, color: d.backgroundColor })) };
}
return { loads: state.loads, query: state.query, charts, status: $('status').textContent,
  tables: Object.fromEntries([...document.querySelectorAll('table')].map(t => [t.id, t.tBodies[0].rows.length])),
  totals: Object.fromEntries([...document.querySelectorAll('#totals [id]')].map(e => [e.id, e.textContent])),
  preset: $('preset').value, custom: { from: $('from').value, to: $('to').value },
  search: location.search, path: location.pathname, kept: window.linkoutKept === true,
  links: [...document.querySelectorAll('a[data-path]')].map(a => a.getAttribute('href')),
  alert: shown('reporter-alert') ? [...$('reporter-alert').children].map(e => e.textContent).join('\\n') : null,
  sections: [...document.querySelectorAll('main > section')].map(e => e.id || (e.querySelector('h2') || {}).textContent),
  reporter: $('reporter-state') ? $('reporter-state').textContent : null,
  experiments: { chart: shown('experiments'),
    note: shown('no-experiment') ? $('no-experiment').textContent.replace(/\\s+/g, ' ') : null } };
"""

# Set before a range is picked: still there after, when the page was not loaded again.
KEEP = "window.linkoutKept = true"


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


def until_query(browser, query):
    """What the page (this one or a new one) shows once it has drawn `query`."""
    return shown_after(browser, "return window.linkoutDashboard && window.linkoutDashboard.query === %s" % json.dumps(query))


def follow_address(browser, base):
    """The range through the address, as an operator keeps and shares it."""
    seen = {}
    browser.get(base + "/link/nl?range=week")
    seen["opened"] = until_query(browser, "range=week&link=nl")
    browser.find_element("link text", "de").click()
    seen["followed"] = until_query(browser, "range=week&link=de")
    browser.execute_script(KEEP)
    Select(browser.find_element("id", "preset")).select_by_value("custom")
    # Three hours ago to one hour ago, to the minute, as the inputs hold it.
    picked = browser.execute_script("""
        const local = (ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16);
        const now = Date.now();
        document.getElementById('from').value = local(now - 3 * 3600000);
        document.getElementById('to').value = local(now - 3600000);
        return 'from=' + Date.parse(document.getElementById('from').value) + '&to=' + Date.parse(document.getElementById('to').value);
    """)
    browser.find_element("css selector", "#custom button").click()
    seen["custom"] = until_query(browser, picked + "&link=de")
    browser.back()
    seen["back"] = until_query(browser, "range=week&link=de")
    browser.forward()
    seen["forward"] = until_query(browser, picked + "&link=de")
    browser.refresh()
    seen["reloaded"] = until_query(browser, picked + "&link=de")
    seen["console"], seen["failed"] = problems(browser)
    return seen


def main():
    arguments = sys.argv[1:]
    address = "--address" in arguments
    prefix = next((a.split("=", 1)[1] for a in arguments if a.startswith("--prefix=")), "")
    arguments = [a for a in arguments if not a.startswith("--")]
    base, shots, pages = arguments[0].rstrip("/"), arguments[1], arguments[2:]
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
            seen["default"] = browser.execute_script(SHOWN)
            name = "overview" if page == "/" else page.strip("/").replace("/", "-")
            browser.save_screenshot(os.path.join(shots, f"{prefix}{name}.png"))
            browser.execute_script(KEEP)
            Select(browser.find_element("id", "preset")).select_by_value("day")
            seen["picked"] = shown_after(browser, "return window.linkoutDashboard.loads >= 2")
            seen["console"], seen["failed"] = problems(browser, events)
            result["pages"][page] = seen
        if address:
            result["address"] = follow_address(browser, base)
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
            phone.save_screenshot(os.path.join(shots, f"{prefix}overview-phone-dark.png"))
            result["phone"]["console"], result["phone"]["failed"] = problems(phone)
        finally:
            phone.quit()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
