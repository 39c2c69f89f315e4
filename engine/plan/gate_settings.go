package plan

import (
	"fmt"
	"strings"

	"github.com/meterstore/meterstore/internal/sqltree"
)

// ErrSetting is a statement that reads the database's settings, variables,
// secrets or extensions: they name the warehouse's directories and the
// engine's configuration, which a confined session does not see.
var ErrSetting = fmt.Errorf("%w: settings are not readable here", ErrNotAQuery)

// harmlessSettings are the settings current_setting may read in a confined
// session: they shape how values are shown and name no path.
var harmlessSettings = map[string]bool{"timezone": true, "calendar": true}

// settingFunctions read a setting, a variable or a secret by name.
var settingFunctions = map[string]bool{"current_setting": true, "getvariable": true, "which_secret": true}

// settingTableFunctions list the database's settings, secrets, extensions or
// databases (with their paths); refused in every session like every file
// function, by this error so the refusal says why.
var settingTableFunctions = map[string]bool{
	"duckdb_settings": true, "duckdb_secrets": true, "duckdb_extensions": true, "duckdb_databases": true,
	"duckdb_variables": true, "which_secret": true, "pragma_database_list": true, "pragma_storage_info": true,
	"pragma_platform": true, "pragma_version": true, "pragma_user_agent": true, "duckdb_temporary_files": true,
}

// settingViews are catalog views over the settings.
var settingViews = map[string]bool{"pg_settings": true, "duckdb_settings": true}

// checkSettingCall refuses, in a confined session, a call reading a setting
// other than a harmless one named by a constant.
func checkSettingCall(f *sqltree.Function) error {
	name := strings.ToLower(f.Name)
	if !settingFunctions[name] {
		return nil
	}
	if name == "current_setting" && len(f.Children) == 1 {
		if c, ok := f.Children[0].(*sqltree.Constant); ok && !c.IsNull() {
			if v, _ := c.Value.Get("value").(string); harmlessSettings[strings.ToLower(v)] {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: %s(…) in a confined session (only current_setting('TimeZone') and current_setting('Calendar') are readable; the settings name the server's directories and configuration)", ErrSetting, name)
}

// checkSettingView refuses, in a confined session, a catalog view over the
// settings (t is not a CTE).
func checkSettingView(t *sqltree.BaseTable) error {
	if !settingViews[strings.ToLower(t.TableName)] {
		return nil
	}
	switch strings.ToLower(t.SchemaName) {
	case "", "pg_catalog", "main":
		return fmt.Errorf("%w: %s lists the server's directories and configuration, which a confined session does not read (current_setting('TimeZone') is the session time zone)", ErrSetting, t.TableName)
	}
	return nil
}
