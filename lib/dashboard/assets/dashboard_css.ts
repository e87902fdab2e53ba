/**
 * The dashboard's styles, shipped inside the server (no build step, nothing from other hosts): the
 * view's styles (lib/render/shared_css.ts) plus the page's layout, one column on a phone, three from 60rem on.
 */
import { VIEW_CSS } from "../../render/shared_css.ts";

/** The stylesheet served at the dashboard's styles route. */
export const DASHBOARD_CSS = VIEW_CSS +
  `.top { display: flex; align-items: center; justify-content: space-between; gap: 1rem;
  padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; z-index: 1; }
.live { font-size: .8rem; color: var(--muted); }
.live[data-state="live"]::before { content: "● "; color: var(--done); }
.live[data-state="offline"]::before { content: "● "; color: var(--doing); }
.layout { display: grid; gap: 1rem; padding: 1rem; grid-template-columns: minmax(0, 1fr); }
@media (min-width: 60rem) {
  .layout { grid-template-columns: 15rem minmax(0, 1fr) 22rem; align-items: start; }
}
aside > nav, aside > section, main > section { background: var(--card); border: 1px solid var(--line);
  border-radius: 8px; padding: .8rem 1rem; margin-bottom: 1rem; }
.session-list { list-style: none; padding: 0; }
.session { padding: .35rem 0; border-bottom: 1px solid var(--line); display: grid; gap: .15rem; }
.session:last-child { border-bottom: 0; }
.session a { color: var(--accent); font-weight: 600; text-decoration: none; }
.session.current a { text-decoration: underline; }
.session-active { font-size: .8rem; color: var(--doing); }
.session-count, .session-pages { font-size: .8rem; color: var(--muted); margin: .2rem 0; }
.session-pages a { color: var(--accent); }
`;

/** The page's icon: a check mark, as SVG. */
export const DASHBOARD_ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2457c5"/><path d="M4 8.5l2.5 2.5L12 5.5" stroke="#fff" stroke-width="2" fill="none"/></svg>`;
