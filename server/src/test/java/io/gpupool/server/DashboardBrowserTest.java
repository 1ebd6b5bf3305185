package io.gpupool.server;

import io.gpupool.store.TestDatabases;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard end to end in headless Chromium (Debian's chromium + chromedriver, through Selenium):
 * the demo pool shows up live, a job submitted from the form runs (its share appears on a GPU), and the
 * Cancel button cancels it. Screenshots are kept in target/ (dashboard-running.png, dashboard-cancelled.png).
 */
class DashboardBrowserTest {
    @TempDir Path dir;
    @TempDir Path profile;

    private static String tool(String env, String fallback) {
        String v = System.getenv(env);
        String path = v != null && !v.isBlank() ? v : fallback;
        if (!Files.isExecutable(Path.of(path))) {
            String why = path + " is missing: install it with `apt-get install -y chromium chromium-driver` (.ci/services.sh does)";
            if (TestDatabases.inCi()) throw new AssertionError("CI must run the browser test, but " + why);
            Assumptions.abort("skipped: " + why);
        }
        return path;
    }

    @Test
    void submit_watch_it_run_and_cancel_from_the_dashboard() throws Exception {
        String chromium = tool("GPUPOOL_TEST_CHROMIUM", "/usr/bin/chromium");
        String chromedriver = tool("GPUPOOL_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
        // the demo's workload keeps part of this larger pool busy; the test's job still finds room
        ServerOptions o = TestServer.options(dir).withDemo(true).withCluster("5x8:A100-80GB,1x8:L40S");
        try (TestServer s = TestServer.start(o)) {
            ChromeOptions opts = new ChromeOptions();
            opts.setBinary(chromium);
            opts.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + profile, "--window-size=1400,1700");
            ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(chromedriver)).usingAnyFreePort().build();
            WebDriver d = new ChromeDriver(service, opts);
            try {
                // the page re-renders parts of itself on every event: an element read mid-render is looked up again
                WebDriverWait wait = new WebDriverWait(d, Duration.ofSeconds(30));
                wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
                d.get(s.base + "/#token=" + ADMIN);
                wait.until(x -> x.findElements(By.cssSelector("#nodes .node")).size() == 6);
                wait.until(x -> x.findElement(By.id("live")).getText().equals("live"));
                wait.until(x -> !x.findElements(By.cssSelector("#nodes .task")).isEmpty()); // the demo's jobs run
                assertThat(d.findElement(By.id("whoami")).getText()).isEqualTo("admin");
                // an advance reservation is listed (one L40S for an hour, an hour from now)
                assertThat(s.post("/api/v1/reservations", ADMIN, java.util.Map.of("name", "browser-res", "tenant", "nlp", "gpus", 1,
                        "model", "L40S", "start", "+1h", "end", "+2h", "ignoreRunningJobs", true)).status()).isEqualTo(201);
                wait.until(x -> x.findElement(By.id("reservations")).getText().contains("browser-res"));
                assertThat(d.findElement(By.id("reservations")).getText()).contains("nlp", "L40S", "starts in");
                // which replica serves the page (high availability): the one server of an embedded store is the active one
                wait.until(x -> x.findElement(By.id("replica")).getText().equals("active replica " + s.base));
                // the demo's in-process agents run without cgroups, and each node says so
                wait.until(x -> x.findElements(By.cssSelector("#nodes .node h3")).stream().allMatch(h -> h.getText().contains("unconfined")));

                d.findElement(By.id("f-name")).clear();
                d.findElement(By.id("f-name")).sendKeys("browser-e2e");
                new Select(d.findElement(By.id("f-tenant"))).selectByVisibleText("vision");
                d.findElement(By.id("f-gpus")).clear();
                d.findElement(By.id("f-gpus")).sendKeys("1");
                d.findElement(By.id("f-command")).clear();
                d.findElement(By.id("f-command")).sendKeys("sleep 900");
                d.findElement(By.id("f-submit")).click();
                wait.until(x -> x.findElement(By.id("submit-result")).getText().startsWith("submitted j"));
                String id = d.findElement(By.id("submit-result")).getDomAttribute("data-job");
                assertThat(id).startsWith("j");

                // watch it run: the detail panel follows the job's events, the grid shows its share on a GPU
                wait.until(x -> x.findElement(By.id("detail-state")).getText().equals("RUNNING"));
                wait.until(x -> !x.findElements(By.cssSelector("#nodes .task[data-job='" + id + "']")).isEmpty());
                wait.until(x -> x.findElement(By.id("job-detail")).getText().contains("runs on"));
                assertThat(d.findElement(By.id("job-detail")).getText()).contains("browser-e2e", "sleep 900");
                shot(d, "dashboard-running.png");

                wait.until(x -> {
                    x.findElement(By.id("detail-cancel")).click();
                    return true;
                });
                wait.until(x -> x.findElement(By.id("detail-state")).getText().equals("CANCELLED"));
                wait.until(x -> x.findElements(By.cssSelector("#nodes .task[data-job='" + id + "']")).isEmpty());
                shot(d, "dashboard-cancelled.png");
                assertThat(s.get("/api/v1/jobs/" + id, ADMIN).text("state")).isEqualTo("CANCELLED");
            } finally {
                d.quit();
            }
        }
    }

    private static void shot(WebDriver d, String name) throws Exception {
        File f = ((TakesScreenshot) d).getScreenshotAs(OutputType.FILE);
        Path out = Path.of("target", name);
        Files.createDirectories(out.getParent());
        Files.copy(f.toPath(), out, StandardCopyOption.REPLACE_EXISTING);
    }
}
