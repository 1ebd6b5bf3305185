package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The dashboard's usage and what-if cards in headless Chromium: a tenant's cancelled job shows its allocated GPU-hours in the
 * table (as the API computes them) and in the chart over the last 24 hours by hour and over 7 days by day; a member
 * of another tenant sees only its own (empty) usage; the what-if card compares policies on that job, the record first,
 * and shows a refused policy name. Screenshots: target/dashboard-usage.png, target/dashboard-whatif.png.
 */
class UsageDashboardBrowserTest {
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
    void the_usage_card_shows_allocated_gpu_hours_per_tenant_in_the_table_and_over_time() throws Exception {
        String chromium = tool("GPUPOOL_TEST_CHROMIUM", "/usr/bin/chromium");
        String chromedriver = tool("GPUPOOL_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
        try (TestServer s = TestServer.start(TestServer.options(dir).withCluster("1x4:T4"))) {
            String ml = s.tenantWithToken("ml", 1);
            String cv = s.tenantWithToken("cv", 1);
            String id = s.post("/api/v1/jobs", ml, Map.of("numGpus", 2, "command", List.of("train"))).text("id");
            TestServer.eventually("the job runs", () -> s.get("/api/v1/jobs/" + id, ml).text("state").equals("RUNNING"));
            assertThat(s.delete("/api/v1/jobs/" + id, ml).status()).isEqualTo(200);
            JsonNode report = s.get("/api/v1/usage?since=24h", ADMIN).body();
            double hours = report.path("total").path("gpuHoursAllocated").asDouble();
            assertThat(hours).isPositive();

            ChromeOptions opts = new ChromeOptions();
            opts.setBinary(chromium);
            opts.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + profile, "--window-size=1400,1900");
            ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(chromedriver)).usingAnyFreePort().build();
            WebDriver d = new ChromeDriver(service, opts);
            try {
                WebDriverWait wait = new WebDriverWait(d, Duration.ofSeconds(30));
                wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class);
                d.get(s.base + "/#token=" + ADMIN);
                By mlAllocated = By.cssSelector("#usage tbody tr[data-tenant='ml'] td.alloc");
                wait.until(x -> !x.findElements(mlAllocated).isEmpty());
                assertThat(d.findElement(mlAllocated).getText()).isEqualTo(significant(hours));
                assertThat(d.findElements(By.cssSelector("#usage tbody tr[data-tenant='cv']"))).as("no usage, no row").isEmpty();
                // 24 hours from a time that is not a full hour touch 25 hourly buckets; the chart holds all of the job
                wait.until(x -> "25".equals(x.findElement(By.id("usage-chart")).getDomAttribute("data-buckets")));
                assertThat(Double.parseDouble(d.findElement(By.id("usage-chart")).getDomAttribute("data-allocated"))).isCloseTo(hours, within(1e-5));
                shot(d, "dashboard-usage.png");

                new Select(d.findElement(By.id("usage-range"))).selectByValue("7d");
                wait.until(x -> "8".equals(x.findElement(By.id("usage-chart")).getDomAttribute("data-buckets")));
                assertThat(Double.parseDouble(d.findElement(By.id("usage-chart")).getDomAttribute("data-allocated"))).isCloseTo(hours, within(1e-5));

                // the what-if card: the record first, then each policy asked for, on the same finished job
                d.findElement(By.id("whatif-policies")).clear();
                d.findElement(By.id("whatif-policies")).sendKeys("fcfs, las");
                d.findElement(By.id("whatif-run")).click();
                By whatIfRows = By.cssSelector("#whatif tbody tr");
                wait.until(x -> x.findElements(whatIfRows).size() == 3);
                List<String> policies = d.findElements(By.cssSelector("#whatif tbody tr td:first-child")).stream().map(e -> e.getText()).toList();
                assertThat(policies).containsExactly("recorded (fair-share)", "fcfs", "las");
                assertThat(d.findElements(By.cssSelector("#whatif tbody tr td:nth-child(2)")).stream().map(e -> e.getText()).toList()).containsOnly("1");
                assertThat(d.findElement(By.id("whatif-note")).getText()).startsWith("1 finished jobs submitted");
                d.findElement(By.id("whatif-policies")).clear();
                d.findElement(By.id("whatif-policies")).sendKeys("fifo");
                d.findElement(By.id("whatif-run")).click();
                wait.until(x -> x.findElement(By.id("whatif-note")).getText().contains("unknown policy 'fifo'"));
                shot(d, "dashboard-whatif.png");

                // a member of another tenant: its own usage only
                d.get(s.base + "/?member#token=" + cv);
                By total = By.cssSelector("#usage tbody tr.total td.alloc");
                wait.until(x -> x.findElement(By.id("whoami")).getText().equals("member of cv"));
                wait.until(x -> !x.findElements(total).isEmpty());
                assertThat(d.findElement(total).getText()).isEqualTo("0");
                assertThat(d.findElements(By.cssSelector("#usage tbody tr[data-tenant='ml']"))).isEmpty();
                assertThat(d.findElement(By.id("usage-window")).getText()).contains("tenant cv");
            } finally {
                d.quit();
            }
        }
    }

    /** As the page shows GPU-hours: four significant digits, plain. */
    private static String significant(double v) {
        return new java.math.BigDecimal(v).round(new java.math.MathContext(4)).stripTrailingZeros().toPlainString();
    }

    private static void shot(WebDriver d, String name) throws Exception {
        File f = ((TakesScreenshot) d).getScreenshotAs(OutputType.FILE);
        Path out = Path.of("target", name);
        Files.createDirectories(out.getParent());
        Files.copy(f.toPath(), out, StandardCopyOption.REPLACE_EXISTING);
    }
}
