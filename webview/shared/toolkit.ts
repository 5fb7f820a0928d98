/**
 * The one module that imports @vscode/webview-ui-toolkit (deprecated by its authors on 2025-01-01; pinned exactly).
 * Only the components this view uses are registered, so replacing the toolkit touches this file and the tag names.
 */
import {
  provideVSCodeDesignSystem,
  vsCodeButton,
  vsCodeDataGrid,
  vsCodeDataGridCell,
  vsCodeDataGridRow,
  vsCodePanels,
  vsCodePanelTab,
  vsCodePanelView,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';

export function registerToolkit(): void {
  provideVSCodeDesignSystem().register(
    vsCodeButton(),
    vsCodeDataGrid(),
    vsCodeDataGridCell(),
    vsCodeDataGridRow(),
    vsCodePanels(),
    vsCodePanelTab(),
    vsCodePanelView(),
    vsCodeTextField(),
  );
}
