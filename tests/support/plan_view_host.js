/**
 * A chat host for tests, built on the official host side of MCP Apps
 * (`@modelcontextprotocol/ext-apps/app-bridge`): it shows the view from `?view=URL` in a sandboxed
 * iframe of another origin and relays every tool call of the view to the test (`relay`, exposed by
 * playwright), which makes it on the real server through the SDK client. Plain JavaScript: it runs
 * in the browser and is bundled, not type-checked with the Deno tests (whose types differ from the DOM's).
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const params = new URL(location.href).searchParams;
const theme = params.get("theme") ?? "light";
const width = Number(params.get("width") ?? "420");

const iframe = document.createElement("iframe");
iframe.setAttribute("sandbox", "allow-scripts");
iframe.setAttribute("title", "Plan view");
iframe.style.cssText =
  `display: block; width: ${width}px; height: 200px; border: 1px solid #8888; border-radius: 8px;`;
iframe.src = params.get("view");
document.body.appendChild(iframe);

const context = { theme, displayMode: "inline", containerDimensions: { maxWidth: width } };
const bridge = new AppBridge(
  null,
  { name: "checklist-test-host", version: "0.0.0" },
  { serverTools: {}, logging: {} },
  { hostContext: context },
);
bridge.oncalltool = (request) => globalThis.relay(request.name, request.arguments ?? {});
bridge.onsizechange = ({ height }) => {
  if (height) iframe.style.height = `${Math.ceil(height) + 2}px`;
};
const ready = new Promise((resolve) => {
  bridge.oninitialized = () => resolve();
});
await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));

globalThis.host = {
  ready,
  /** Hands the view a tool call's arguments and then its result, as a host does. */
  async show(args, result) {
    await ready;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
  },
  /** Switches the host's theme (the view hears of it as a host context change). */
  theme(next) {
    bridge.setHostContext({ ...context, theme: next });
  },
};
