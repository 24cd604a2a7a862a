import { defineConfig } from 'wxt';
import { PLATFORM_MATCHES } from './lib/extract/platforms';

/** The public half of a key pair, so an unpacked build always has the same extension id
 * (ibjigdcepmcfoplhobofpgjnoibiglci), which memlane's origin allow-list and the tests can name.
 * Not a secret; a store listing gets an id of its own. */
const DEV_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAxc1+jkye0nYb5XN31Gl3NjZoqB4V8ZsPhUY3Lj5wDizTi3vOKAH/QVjeSEmJuj+gJt0MU4ZnRNvL1UM/Rl3B/iDfZKCMzh2phCyq34el4WZgcGHkfzqKd8pI4DakkexaBh8m8TKylqD5Quelhq4c9vpTFqDuKZ59MbK6qalS2p2nnpsF8NcBXYjIMpZQtUF2utPHYryytHoe8YYj6L0MAb7b2AAuPovRpIxIbCBHs5kNA1OM3BgFNcB8gvpCgTdMo9TPXIsxbrZHW8gKAPuPm3EH+/vfMaIc4XaIjZGK/hVoKNSJMNALzWjYx3t7Y+FhB/0fI9mxXa+jfDPkmHpaawIDAQAB';

export default defineConfig({
  manifestVersion: 3,
  outDir: '.output',
  manifest: ({ browser }) => ({
    name: 'memlane',
    description: 'Save pages, selections and links to memlane, and search your memories.',
    permissions: ['activeTab', 'scripting', 'contextMenus', 'alarms', 'unlimitedStorage'],
    // The local server (any other memlane URL is asked for on the options page), and the sites with
    // a content script of their own: there the service worker may also read the tab's address and
    // inject the extractor into tabs opened before the extension was installed.
    host_permissions: ['http://127.0.0.1/*', 'http://localhost/*', ...Object.values(PLATFORM_MATCHES).flat()],
    optional_host_permissions: ['https://*/*', 'http://*/*'],
    commands: {
      'save-page': {
        suggested_key: { default: 'Alt+Shift+S' },
        description: 'Save this page to memlane',
      },
    },
    ...(browser === 'firefox'
      ? {
          browser_specific_settings: {
            gecko: { id: 'memlane@memlane.dev', strict_min_version: '128.0', data_collection_permissions: { required: ['none'] } },
          },
        }
      : { key: DEV_KEY }),
  }),
});
